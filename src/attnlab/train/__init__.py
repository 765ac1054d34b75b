"""Task-agnostic training: config, loop, checkpoints, schedules, monitoring, DDP.

A task (translation, captioning, language modelling) implements `Task` (see task.py) and calls

    result = train(task, train_config, RunDir("runs/x"), resume=False)
"""

from .checkpoint import Checkpoint, RunDir
from .config import EarlyStoppingConfig, ScheduleConfig, TrainConfig
from .loop import STOP_REASONS, TrainResult, train
from .rng import seed_everything
from .schedule import SCHEDULES, PlateauSchedule, Schedule, WarmupDecaySchedule, build_schedule
from .task import LossOutput, Task, Validation

__all__ = [
    "Checkpoint", "RunDir", "EarlyStoppingConfig", "ScheduleConfig", "TrainConfig",
    "STOP_REASONS", "TrainResult", "train", "seed_everything", "SCHEDULES", "PlateauSchedule",
    "Schedule", "WarmupDecaySchedule", "build_schedule", "LossOutput", "Task", "Validation",
]
