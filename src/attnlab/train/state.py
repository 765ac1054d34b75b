"""The training state in a `last` checkpoint: everything besides the weights that a resumed
run needs to continue exactly. Only tensors and plain containers, for weights_only loading."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from attnlab.config import config_to_dict
from attnlab.errors import CheckpointError

from .checkpoint import Checkpoint
from .config import TrainConfig
from .distributed import DistContext
from .rng import seed_everything, set_rng_state
from .schedule import Schedule
from .task import SamplerLike


@dataclass
class Progress:
    """The loop's counters."""

    step: int = 0
    epoch: int = 0                    # complete epochs (= the sampler's current epoch)
    best_metric: float | None = None
    bad_validations: int = 0          # validations since the metric last improved
    elapsed_seconds: float = 0.0      # training wall-clock, summed over resumed runs
    last_metrics: dict[str, float] = field(default_factory=dict)
    validated_at: int = -1            # step of the latest validation
    saved_at: int = -1                # step of the latest `last` checkpoint


def training_state(optimizer: torch.optim.Optimizer, config: TrainConfig, schedule: Schedule,
                   sampler: SamplerLike, progress: Progress, rngs: list[dict]) -> dict:
    """rngs: every rank's `rng_state()`, in rank order."""
    return {"optimizer": optimizer.state_dict(),
            "schedule": {"kind": config.schedule.kind, "state": schedule.state_dict()},
            "sampler": sampler.state_dict(),
            "progress": dataclasses.asdict(progress),
            "rng": rngs,
            "train_config": config_to_dict(config)}   # for the record; the new one applies


def restore_training_state(checkpoint: Checkpoint, optimizer: torch.optim.Optimizer,
                           config: TrainConfig, schedule: Schedule, sampler: SamplerLike,
                           context: DistContext) -> Progress:
    """Load what `training_state` saved into the optimizer, schedule, sampler and this rank's
    RNGs; returns the counters. A changed schedule kind starts its schedule afresh."""
    state = checkpoint.training_state
    if state is None:
        raise CheckpointError(f"checkpoint {checkpoint.path} has no training state to resume")
    try:
        optimizer.load_state_dict(state["optimizer"])
        if state["schedule"]["kind"] == config.schedule.kind:
            schedule.load_state_dict(state["schedule"]["state"])
        progress = Progress(**state["progress"])
        rngs = state["rng"]
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"checkpoint {checkpoint.path} has an unusable training state: "
                              f"{error}") from None
    sampler.load_state_dict(state["sampler"])
    if len(rngs) == context.world_size:
        set_rng_state(rngs[context.rank])
    else:  # another number of processes: an exact continuation is impossible anyway
        seed_everything(config.seed + context.rank + progress.step)
    return progress
