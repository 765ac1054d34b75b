"""The training state in a `last` checkpoint: everything besides the weights that a resumed
run needs to continue exactly. Only tensors and plain containers, for weights_only loading.

Before any of it is applied, it is checked against the model it is to continue: the step it was
saved at is its weights' step, and the optimizer state has one entry per parameter of the
parameter's shape and dtype. A state from another model is one CheckpointError sentence, never
moments of the wrong shape (or a crash inside the fused Adam kernel)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch

from attnlab.config import config_to_dict
from attnlab.errors import CheckpointError

from .checkpoint import STATE_FILE, Checkpoint
from .config import TrainConfig
from .device import Precision
from .distributed import DistContext
from .rng import seed_everything, set_rng_state
from .schedule import Schedule
from .task import SamplerLike

STATE_KEYS = ("optimizer", "schedule", "sampler", "progress", "rng")


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
                   sampler: SamplerLike, progress: Progress, rngs: list[dict],
                   scaler: dict | None = None) -> dict:
    """rngs: every rank's `rng_state()`, in rank order; scaler: the fp16 gradient scaler's
    state (Precision.state_dict; empty in fp32 and bf16)."""
    return {"optimizer": optimizer.state_dict(),
            "schedule": {"kind": config.schedule.kind, "state": schedule.state_dict()},
            "sampler": sampler.state_dict(),
            "progress": dataclasses.asdict(progress),
            "rng": rngs,
            "scaler": dict(scaler or {}),
            "train_config": config_to_dict(config)}   # for the record; the new one applies


def restore_training_state(checkpoint: Checkpoint, optimizer: torch.optim.Optimizer,
                           names: list[str], config: TrainConfig, schedule: Schedule,
                           sampler: SamplerLike, context: DistContext,
                           precision: Precision | None = None) -> Progress:
    """Check, then load what `training_state` saved into the optimizer, schedule, sampler,
    fp16 gradient scaler (`precision`'s) and this rank's RNGs; returns the counters. names: the
    optimizer's parameters' names, in order. A changed schedule kind starts its schedule
    afresh; a run saved in another precision (or before scalers were saved) starts its scaler
    afresh."""
    state, path = checkpoint.training_state, checkpoint.path / STATE_FILE
    if state is None:
        raise CheckpointError(f"checkpoint {checkpoint.path} has no training state to resume")
    progress = check_training_state(state, checkpoint, optimizer, names)
    try:
        optimizer.load_state_dict(state["optimizer"])
        if state["schedule"]["kind"] == config.schedule.kind:
            schedule.load_state_dict(state["schedule"]["state"])
        sampler.load_state_dict(state["sampler"])
        if precision is not None:
            precision.load_state_dict(state.get("scaler") or {})
    except CheckpointError as error:
        raise CheckpointError(f"cannot resume from {path}: {error}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CheckpointError(f"{path} has an unusable training state: {error!r}") from None
    rngs = state["rng"]
    if isinstance(rngs, list) and len(rngs) == context.world_size:
        try:
            set_rng_state(rngs[context.rank])
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as error:
            raise CheckpointError(f"{path} has unusable RNG states: {error!r}") from None
    else:  # another number of processes: an exact continuation is impossible anyway
        seed_everything(config.seed + context.rank + progress.step)
    return progress


def check_training_state(state: dict, checkpoint: Checkpoint, optimizer: torch.optim.Optimizer,
                         names: list[str]) -> Progress:
    """The saved counters, once the state is complete, of the weights' step and fits the
    optimizer's parameters; CheckpointError naming the file otherwise."""
    path = checkpoint.path / STATE_FILE
    missing = [key for key in STATE_KEYS if key not in state]
    if missing:
        raise CheckpointError(f"{path} is not a complete training state: it lacks "
                              f"{', '.join(missing)}")
    try:
        progress = Progress(**state["progress"])
    except TypeError as error:
        raise CheckpointError(f"{path} has unusable counters: {error}") from None
    step = checkpoint.meta.get("step")
    if step is not None and progress.step != step:
        raise CheckpointError(f"{path} was saved at step {progress.step} but the weights beside "
                              f"it at step {step}: the two files belong to different "
                              f"checkpoints")
    check_optimizer_state(state["optimizer"], optimizer, names, path)
    return progress


def check_optimizer_state(saved, optimizer: torch.optim.Optimizer, names: list[str],
                          path) -> None:
    """`saved` (an optimizer state_dict) fits `optimizer`: as many groups and parameters, every
    group setting of the same kind, and every per-parameter tensor (exp_avg, exp_avg_sq: the
    parameter's shape and dtype; step: one number)."""
    try:
        groups, per_parameter = saved["param_groups"], saved["state"]
        counts = [len(group["params"]) for group in groups]
        indices = [index for group in groups for index in group["params"]]
        entries = {index: per_parameter.get(index, {}) for index in indices}
    except (KeyError, TypeError, AttributeError) as error:
        raise CheckpointError(f"{path} holds no usable optimizer state ({error!r})") from None
    mine = [len(group["params"]) for group in optimizer.param_groups]
    if counts != mine or len(set(indices)) != len(indices):
        raise CheckpointError(f"{path} holds optimizer state for {sum(counts)} parameters in "
                              f"{len(counts)} groups but this model has {sum(mine)} in "
                              f"{len(mine)}: it was saved for another model")
    for group, theirs in zip(optimizer.param_groups, groups, strict=True):
        _check_group(group, theirs, path)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    kinds = set()
    for name, parameter, index in zip(names, parameters, indices, strict=True):
        if not isinstance(entries[index], dict):
            raise CheckpointError(f"{path} holds no usable optimizer state for {name!r}")
        for key, value in entries[index].items():
            _check_entry(name, parameter, key, value, path)
        kinds |= {tuple(sorted(map(str, entries[index])))} if entries[index] else set()
    if len(kinds) > 1:   # every parameter the optimizer has stepped keeps the same tensors
        raise CheckpointError(f"{path} holds optimizer state of different kinds per parameter "
                              f"({' vs '.join(', '.join(k) for k in sorted(kinds))})")


def _check_group(mine: dict, theirs, path) -> None:
    """The saved group replaces ours: each setting the step reads must be there, of our kind
    (a number, a pair of numbers, a flag)."""
    if not isinstance(theirs, dict):
        raise CheckpointError(f"{path} holds an optimizer parameter group that is not a table")
    for key, value in mine.items():
        if key in ("params", "param_names"):
            continue
        if key not in theirs:
            if isinstance(value, (bool, str)) or value is None:
                continue   # a flag: Adam fills in its default
            raise CheckpointError(f"{path} holds an optimizer group without {key!r}")
        if _kind(theirs[key]) != _kind(value):
            raise CheckpointError(f"{path} holds an optimizer group whose {key!r} is "
                                  f"{theirs[key]!r}, not like this run's {value!r}")


def _kind(value):
    """Numbers are alike (0 and 0.01), as are flags, pairs of numbers, None."""
    if isinstance(value, bool) or value is None:
        return "flag"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, (tuple, list)):
        return ("sequence", tuple(_kind(v) for v in value))
    return type(value).__name__


def _check_entry(name: str, parameter: torch.Tensor, key, value, path) -> None:
    if not isinstance(value, torch.Tensor):
        raise CheckpointError(f"{path} holds optimizer {key!r} of {name!r} that is a "
                              f"{type(value).__name__}, not a tensor")
    if key == "step":
        if value.numel() != 1 or value.dtype.is_complex or value.dtype == torch.bool:
            raise CheckpointError(f"{path} holds optimizer step of {name!r} of shape "
                                  f"{list(value.shape)}, not one number")
        return
    if value.shape != parameter.shape:
        raise CheckpointError(f"{path} holds optimizer {key} of {name!r} of shape "
                              f"{list(value.shape)} but the parameter's is "
                              f"{list(parameter.shape)}: it was saved for another model")
    if value.dtype != parameter.dtype:
        raise CheckpointError(f"{path} holds optimizer {key} of {name!r} as {value.dtype} but "
                              f"the parameter is {parameter.dtype}: it was saved for another "
                              f"model")
