"""Task-agnostic training: config, loop, checkpoints, schedules, monitoring, DDP.

A task (translation, captioning, language modelling) implements `Task` (see task.py); then

    result = run_experiment(TranslationTask, config, "runs/x")   # or train(task, ...)
    run = open_run("runs/x", RunConfig, task="translation")      # a trained run, to load
"""

from .checkpoint import Checkpoint, RunDir
from .config import EarlyStoppingConfig, ScheduleConfig, TrainConfig
from .experiment import experiment_config, run_experiment
from .loop import STOP_REASONS, TrainResult, train
from .rng import seed_everything
from .runs import OpenedRun, choose_checkpoint, load_weights, open_run, pick_device, run_task
from .schedule import SCHEDULES, PlateauSchedule, Schedule, WarmupDecaySchedule, build_schedule
from .task import LossOutput, Task, Validation
from .validation import perplexity, validation_nll

__all__ = [
    "Checkpoint", "RunDir", "EarlyStoppingConfig", "ScheduleConfig", "TrainConfig",
    "STOP_REASONS", "TrainResult", "train", "seed_everything", "SCHEDULES", "PlateauSchedule",
    "Schedule", "WarmupDecaySchedule", "build_schedule", "LossOutput", "Task", "Validation",
    "OpenedRun", "choose_checkpoint", "experiment_config", "load_weights", "open_run",
    "perplexity", "pick_device", "run_experiment", "run_task", "validation_nll",
]
