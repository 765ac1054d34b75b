"""Train a translation model end to end: config -> run directory -> trained checkpoints."""

from __future__ import annotations

from pathlib import Path

from attnlab.train import distributed
from attnlab.train.checkpoint import RunDir
from attnlab.train.experiment import experiment_config, prepare_task, run_experiment
from attnlab.train.loop import TrainResult

from .config import RunConfig
from .task import TranslationTask


def load_run_config(path: str | None, run_dir: str | Path, overrides: list[str],
                    resume: bool) -> RunConfig:
    """The translation config: from `path`, or (resuming without one) from the run directory."""
    return experiment_config(RunConfig, path, run_dir, overrides, resume)


def build_task(config: RunConfig, run_dir: RunDir, context: distributed.DistContext,
               log=print) -> TranslationTask:
    """The task on every rank; rank 0 alone trains the vocabularies, the others then load them."""
    return prepare_task(lambda log: TranslationTask(config, run_dir.path, log=log), config,
                        run_dir, context, log)


def train_translation(config: RunConfig, run_dir: str | Path, *, resume: bool = False,
                      progress: bool = True, log=print) -> TrainResult:
    """Build the task and train; vocabularies, config and checkpoints go to `run_dir`.
    Under torchrun every rank calls this (DistributedDataParallel, rank 0 writes)."""
    return run_experiment(lambda log: TranslationTask(config, Path(run_dir), log=log), config,
                          run_dir, resume=resume, progress=progress, log=log)
