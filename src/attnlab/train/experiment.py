"""What every `... train` command does: find the experiment config (the YAML given, or the run
directory's own), check everything, then write the run directory and train.

Nothing in the run directory changes until every check has passed: the run directory itself (a
run with checkpoints needs `resume` or `overwrite`), the data and vocabularies (building the
task), and on resume the `last` checkpoint (signature, weights, training state). Only then does
rank 0 remove what `overwrite` replaces and write config.json and the task's files
(vocabularies); under torchrun the other ranks wait for that, then build their task from those
files, or stop with rank 0 when it refused.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import CheckpointError, ConfigError, UserError, WriteError
from attnlab.files import writing

from . import distributed
from .checkpoint import CHECKPOINTS, RunDir
from .loop import Trainer, TrainResult
from .monitor import METRICS_FILE
from .rng import seed_everything
from .task import Task

T = TypeVar("T")


class TaskFactory(Protocol):
    """A task class: task_class(config, files, log=print) -> Task. files: the run directory
    whose files (vocabularies) the task reads, or None to build them from the data; it writes
    nothing (its save_files(directory) does, and run_files names those files). Its class
    attributes (see Task) are read before the task is built."""

    run_files: tuple[str, ...]
    guides_attention: bool

    def __call__(self, config: Any, files: Path | None, /, *, log: Callable[[str], object]
                 ) -> Task: ...


# What a run writes besides the task's own files (listed between these); a new run in the
# directory of an old one removes them, so that nothing of the two mixes.
RUN_ENTRIES = ("best", "last", "best.old", "last.old", "best.tmp", "last.tmp", "config.json",
               "checkpoints")
LOG_ENTRIES = (METRICS_FILE, "tensorboard")


def experiment_config(cls: type[T], path: str | None, run_dir: str | Path,
                      overrides: Sequence[str], resume: bool) -> T:
    """The config `cls` from `path`, or (resuming without one) from the run directory's
    config.json; `overrides` (key=value) applied either way."""
    if path is not None:
        return load_config(path, cls, overrides)
    stored = RunDir(run_dir).file("config.json")
    if resume and not Path(run_dir).exists():
        raise CheckpointError(f"cannot resume {run_dir}: it does not exist")
    if not resume or not stored.is_file():
        raise ConfigError(f"no config given and none stored in {run_dir}: pass CONFIG.yaml")
    config = config_from_dict(RunDir(run_dir).read_config(), cls, origin=str(stored))
    return load_config(config_to_dict(config), cls, overrides) if overrides else config


def run_experiment(task_class: TaskFactory, config, run_dir: str | Path, *,
                   resume: bool = False, overwrite: bool = False, progress: bool = True,
                   label: str | None = None, log=print) -> TrainResult:
    """Train the task `task_class` builds (TranslationTask, CaptionTask, LanguageModelTask) with
    `config.train`; vocabularies, config.json and checkpoints go to `run_dir`.

    A run directory that holds checkpoints is trained on only with resume (continue from
    `last`) or overwrite (replace the old run). Under torchrun every rank calls this
    (DistributedDataParallel, rank 0 writes). `label` names the run on its progress bar."""
    context = distributed.setup(config.train.device)
    try:
        trainer = prepare_run(task_class, config, RunDir(run_dir), context, resume=resume,
                              overwrite=overwrite, log=log)
        return trainer.fit(progress, label)
    finally:
        distributed.teardown(context)


def prepare_run(task_class: TaskFactory, config, run_dir: RunDir,
                context: distributed.DistContext, *, resume: bool = False,
                overwrite: bool = False, log=print) -> Trainer:
    """Every rank's Trainer, checked and prepared: rank 0 checks everything, then writes the
    run directory; the others wait for it, then build theirs from the files it wrote."""
    if context.is_main:
        try:
            trainer = _check_and_write(task_class, config, run_dir, context, resume,
                                       overwrite, log)
        except BaseException as error:
            distributed.broadcast(context, (isinstance(error, UserError), str(error)))
            raise
        distributed.broadcast(context, None)
        return trainer
    refused = distributed.broadcast(context, None)
    if refused is not None:
        user_error, message = refused
        raise (UserError if user_error else RuntimeError)(f"rank 0 stopped: {message}")
    return _trainer(task_class, config, run_dir, context, run_dir.path, resume, lambda _: None)


def _check_and_write(task_class: TaskFactory, config, run_dir: RunDir,
                     context: distributed.DistContext, resume: bool, overwrite: bool,
                     log) -> Trainer:
    check_run_dir(run_dir, resume, overwrite)
    trainer = _trainer(task_class, config, run_dir, context, run_dir.path if resume else None,
                       resume, log)
    task = trainer.task
    if not resume:
        replace_run(run_dir, task.run_files, log)
    run_dir.write_config(config_to_dict(config))
    if not resume:
        task.save_files(run_dir.path)
    return trainer


def _trainer(task_class: TaskFactory, config, run_dir: RunDir,
             context: distributed.DistContext, files: Path | None, resume: bool,
             log) -> Trainer:
    """Build the task (seeded: the initial weights are part of the experiment) and its Trainer,
    restored from `last` when resuming."""
    if config.train.guided_alignment is not None and not task_class.guides_attention:
        raise ConfigError("train.guided_alignment trains a translation model's attention; "
                          "this task does not read it")
    seed_everything(config.train.seed)
    task = task_class(config, files, log=log)
    trainer = Trainer(task, config.train, run_dir, context)
    trainer.prepare(resume)
    return trainer


def check_run_dir(run_dir: RunDir, resume: bool, overwrite: bool) -> None:
    """The run directory can take this run: a folder (or nothing yet) below folders; with
    `last` to resume from; without checkpoints unless resuming or overwriting."""
    path = run_dir.path
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise WriteError(f"cannot write the run directory {path}: {part} is a file, not "
                             f"a folder")
    if resume and overwrite:
        raise ConfigError("--resume continues a run and --overwrite replaces it: give one of "
                          "them, not both")
    if resume and not run_dir.has_checkpoint("last"):
        where = "it does not exist" if not path.exists() else "it has no last/ checkpoint"
        raise CheckpointError(f"cannot resume {path}: {where}")
    held = checkpoints(run_dir)
    if held and not resume and not overwrite:
        raise WriteError(f"{path} already holds a trained run with {', '.join(held)}: pass "
                         f"--resume to continue it or --overwrite to replace it")


def checkpoints(run_dir: RunDir) -> list[str]:
    """The run's checkpoints as 'best/ (step 1200)', for messages."""
    found = []
    for name in CHECKPOINTS:
        directory = run_dir.checkpoint_dir(name)
        if directory is not None:
            step = run_dir.saved_step(name)
            found.append(f"{directory.name}/ (step {'?' if step is None else step})")
    return found


def replace_run(run_dir: RunDir, task_files: Sequence[str], log) -> None:
    """Remove what a new run in `run_dir` replaces: the checkpoints, config.json, the task's
    files, metrics.jsonl and TensorBoard of a run there before (other files stay)."""
    names = (*RUN_ENTRIES, *task_files, *LOG_ENTRIES)
    present = [run_dir.file(name) for name in names if run_dir.file(name).exists()]
    if not present:
        return
    held = {name.split("/")[0]: name for name in checkpoints(run_dir)}
    shown = [held.get(p.name, p.name + ("/" if p.is_dir() else "")) for p in present]
    kept = sorted(p.name for p in run_dir.path.iterdir() if p.name not in names)
    log(f"replacing {run_dir.path}: {', '.join(shown)}"
        + (f" (keeping {', '.join(kept)})" if kept else ""))
    for path in present:
        with writing(path, "remove"):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
