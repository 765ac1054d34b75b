"""What every `... train` command does: find the experiment config (the YAML given, or the run
directory's own), build the task on every rank, and train."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import ConfigError

from . import distributed
from .checkpoint import RunDir
from .loop import TrainResult, train
from .rng import seed_everything
from .task import Task

T = TypeVar("T")
# A task class: task_class(config, run_dir, log=print) -> Task.
TaskFactory = Callable[..., Task]


def experiment_config(cls: type[T], path: str | None, run_dir: str | Path,
                      overrides: Sequence[str], resume: bool) -> T:
    """The config `cls` from `path`, or (resuming without one) from the run directory's
    config.json; `overrides` (key=value) applied either way."""
    if path is not None:
        return load_config(path, cls, overrides)
    stored = RunDir(run_dir).file("config.json")
    if not resume or not stored.is_file():
        raise ConfigError(f"no config given and none stored in {run_dir}: pass CONFIG.yaml")
    config = config_from_dict(RunDir(run_dir).read_config(), cls, origin=str(stored))
    return load_config(config_to_dict(config), cls, overrides) if overrides else config


def prepare_task(task_class: TaskFactory, config, run_dir: RunDir,
                 context: distributed.DistContext, log=print) -> Task:
    """Build `task_class(config, run_dir.path, log=log)` on every rank: seeded (the initial
    weights are part of the experiment), rank 0 first (it alone writes vocabularies and
    config.json; the others then read them)."""
    seed_everything(config.train.seed)
    if not context.is_main:
        distributed.barrier(context)
    task = task_class(config, run_dir.path, log=log if context.is_main else lambda _: None)
    if context.is_main:
        run_dir.write_config(config_to_dict(config))
        distributed.barrier(context)
    return task


def run_experiment(task_class: TaskFactory, config, run_dir: str | Path, *,
                   resume: bool = False, progress: bool = True, log=print) -> TrainResult:
    """Train the task `task_class(config, run_dir, log=)` builds (TranslationTask, CaptionTask,
    LanguageModelTask) with `config.train`; vocabularies, config.json and checkpoints go to
    `run_dir`. Under torchrun every rank calls this (DistributedDataParallel, rank 0 writes)."""
    context = distributed.setup(config.train.device)
    try:
        directory = RunDir(run_dir)
        task = prepare_task(task_class, config, directory, context, log)
        return train(task, config.train, directory, resume=resume, progress=progress)
    finally:
        distributed.teardown(context)
