"""Learning-rate schedules: the lr for each update, given the step and past validations.

    schedule = build_schedule(config)          # config: TrainConfig
    lr = schedule.lr(step)                     # before update number `step` (1-based)
    schedule.observe(metric)                   # after each validation (plateau cuts here)

Schedules keep only plain numbers as state, so `state_dict()` goes into a checkpoint as is.
They never touch an optimiser: the loop writes `lr(step)` into its param groups.
"""

from __future__ import annotations

import math

from .config import TrainConfig


def is_better(value: float, best: float | None, mode: str) -> bool:
    """Whether a validation metric beats the best so far ("max": larger is better)."""
    if best is None or math.isnan(best):
        return not math.isnan(value)
    return value > best if mode == "max" else value < best


class Schedule:
    """Constant learning rate; the base for the others."""

    def __init__(self, base_lr: float):
        self.base_lr = base_lr

    def lr(self, step: int) -> float:
        """Learning rate for update number `step` (1-based)."""
        return self.base_lr

    def observe(self, metric: float) -> bool:
        """Take a validation result; returns True when the learning rate changed."""
        return False

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


class PlateauSchedule(Schedule):
    """Multiply lr by `factor` after `patience` validations in a row without improvement.

    The counter restarts after each cut, so a long plateau cuts every `patience` validations,
    down to `min_lr`.
    """

    def __init__(self, base_lr: float, *, factor: float, patience: int, mode: str,
                 min_lr: float = 0.0):
        super().__init__(base_lr)
        self.factor, self.patience, self.mode, self.min_lr = factor, patience, mode, min_lr
        self.scale = 1.0
        self.best: float | None = None
        self.bad_validations = 0

    def lr(self, step: int) -> float:
        return max(self.base_lr * self.scale, self.min_lr)

    def observe(self, metric: float) -> bool:
        if is_better(metric, self.best, self.mode):
            self.best, self.bad_validations = metric, 0
            return False
        self.bad_validations += 1
        if self.bad_validations < self.patience:
            return False
        before = self.lr(0)
        self.scale *= self.factor
        self.bad_validations = 0
        return self.lr(0) != before

    def state_dict(self) -> dict:
        return {"scale": self.scale, "best": self.best, "bad_validations": self.bad_validations}

    def load_state_dict(self, state: dict) -> None:
        self.scale = float(state["scale"])
        self.best = None if state["best"] is None else float(state["best"])
        self.bad_validations = int(state["bad_validations"])


class WarmupDecaySchedule(Schedule):
    """Linear warmup to `base_lr` over `warmup_steps` updates, then inverse-square-root decay:
    lr(s) = base_lr * min(s / w, sqrt(w / s)) (Vaswani et al. 2017, eq. 3, peak = base_lr).
    Depends on the step alone, so it has no state to save."""

    def __init__(self, base_lr: float, *, warmup_steps: int):
        super().__init__(base_lr)
        self.warmup_steps = warmup_steps

    def lr(self, step: int) -> float:
        step = max(step, 1)
        return self.base_lr * min(step / self.warmup_steps, math.sqrt(self.warmup_steps / step))


SCHEDULES = {
    "constant": lambda c: Schedule(c.lr),
    "plateau": lambda c: PlateauSchedule(c.lr, factor=c.schedule.factor,
                                         patience=c.schedule.patience,
                                         mode=c.early_stopping.mode, min_lr=c.schedule.min_lr),
    "warmup_decay": lambda c: WarmupDecaySchedule(c.lr, warmup_steps=c.schedule.warmup_steps),
}


def build_schedule(config: TrainConfig) -> Schedule:
    """The schedule named by `config.schedule.kind`, starting from `config.lr`."""
    return SCHEDULES[config.schedule.kind](config)
