"""Train a translation model end to end: config -> run directory -> trained checkpoints."""

from __future__ import annotations

from pathlib import Path

from attnlab.config import config_to_dict
from attnlab.train import distributed
from attnlab.train.checkpoint import RunDir
from attnlab.train.experiment import experiment_config
from attnlab.train.loop import TrainResult, train
from attnlab.train.rng import seed_everything

from .config import RunConfig
from .task import TranslationTask


def load_run_config(path: str | None, run_dir: str | Path, overrides: list[str],
                    resume: bool) -> RunConfig:
    """The translation config: from `path`, or (resuming without one) from the run directory."""
    return experiment_config(RunConfig, path, run_dir, overrides, resume)


def build_task(config: RunConfig, run_dir: RunDir, context: distributed.DistContext,
               log=print) -> TranslationTask:
    """The task on every rank; rank 0 alone trains the vocabularies, the others then load them."""
    seed_everything(config.train.seed)  # the initial weights are part of the experiment
    if not context.is_main:
        distributed.barrier(context)
    task = TranslationTask(config, run_dir.path, log=log if context.is_main else lambda _: None)
    if context.is_main:
        run_dir.write_config(config_to_dict(config))
        distributed.barrier(context)
    return task


def train_translation(config: RunConfig, run_dir: str | Path, *, resume: bool = False,
                      progress: bool = True, log=print) -> TrainResult:
    """Build the task and train; vocabularies, config and checkpoints go to `run_dir`.
    Under torchrun every rank calls this (DistributedDataParallel, rank 0 writes)."""
    context = distributed.setup(config.train.device)
    try:
        directory = RunDir(run_dir)
        task = build_task(config, directory, context, log)
        return train(task, config.train, directory, resume=resume, progress=progress)
    finally:
        distributed.teardown(context)
