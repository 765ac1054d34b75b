"""Where training runs and in what precision, and batches moved there without waiting.

    device = resolve_device("auto")          # cuda when torch sees a GPU, else cpu
    precision = Precision("bf16", device)    # autocast; fp16 adds a gradient scaler
    batch = to_device(batch, device)         # pinned host memory, an asynchronous copy

Mixed precision as Micikevicius et al. 2018 describe it: the weights and the optimiser stay in
fp32, autocast runs the matrix products of the forward pass and the loss in bf16 or fp16, and
for fp16 (whose range is narrow) the loss is scaled up before backward so that small gradients
do not flush to zero; a step whose gradients overflowed is skipped and the scale lowered. The
scaler lives on the device and is read only when a checkpoint is saved: the fused Adam kernel
skips an overflowed step itself, so no step waits for the GPU to say whether it overflowed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any, TypeVar, cast

import torch

from attnlab.errors import ConfigError

from .config import FP16_ON_CPU, check_device_name
from .task import BatchLike

PRECISIONS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}

Batch = TypeVar("Batch", bound=BatchLike)


def resolve_device(name: str | None = "auto", option: str = "train.device") -> torch.device:
    """The device `name` means on this machine: auto (or None) is CUDA when torch sees a GPU,
    else the CPU; cuda is cuda:LOCAL_RANK under torchrun (each rank its own GPU), cuda:0
    otherwise; cuda:N is that GPU. A CUDA device this machine lacks is one ConfigError
    sentence naming `option` (train.device, --device)."""
    if name is None:
        name = "auto"
    try:
        check_device_name(name)
    except ValueError as error:
        raise ConfigError(f"{option} {error}") from None
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(name)
    if device.type != "cuda":
        return device
    if not torch.cuda.is_available():
        raise ConfigError(f"{option} is {name} but torch sees no CUDA device on this machine; "
                          f"set it to auto or cpu")
    if device.index is None:
        device = torch.device("cuda", _local_rank())
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise ConfigError(f"{option} asks for {device} but this machine has {count} CUDA "
                          f"device{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})")
    return device


def _local_rank() -> int:
    """This process's GPU under torchrun (LOCAL_RANK of a multi-process launch), else 0."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return int(os.environ.get("LOCAL_RANK", "0"))
    return 0


def check_precision(name: str, device: torch.device) -> None:
    """One ConfigError sentence when `device` cannot train in precision `name`."""
    if name not in PRECISIONS:
        raise ConfigError(f"train.precision must be one of {', '.join(PRECISIONS)}, got "
                          f"{name!r}")
    if name == "fp16" and device.type != "cuda":
        raise ConfigError(FP16_ON_CPU)
    if name == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise ConfigError(f"train.precision bf16 needs a GPU with bfloat16 (Ampere or newer) "
                          f"and {torch.cuda.get_device_name(device)} has none; use fp16 or "
                          f"fp32")


class Precision:
    """One run's arithmetic: autocast around forward + loss, and for fp16 a GradScaler.

    A step is `with p.autocast(): loss = ...`, `p.backward(loss)`, `p.unscale(optimizer)`
    (before clipping: the norm is then of the true gradients), `p.step(optimizer)`.
    `state_dict` is the scaler's (empty unless fp16): saved in `last`, so a resumed fp16 run
    continues with the same loss scale.
    """

    def __init__(self, name: str, device: torch.device):
        check_precision(name, device)
        self.name, self.device, self.dtype = name, device, PRECISIONS[name]
        self.scaler = torch.amp.GradScaler(device.type) if name == "fp16" else None

    def autocast(self) -> contextlib.AbstractContextManager:
        if self.name == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        (loss if self.scaler is None else self.scaler.scale(loss)).backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """The optimiser's step (skipped on the device when fp16 gradients overflowed)."""
        if self.scaler is None:
            optimizer.step()
            return
        self.scaler.step(optimizer)
        self.scaler.update()

    def loss_scale(self) -> float | None:
        """The current fp16 loss scale (waits for the device), None without a scaler."""
        return None if self.scaler is None else float(self.scaler.get_scale())

    def state_dict(self) -> dict[str, Any]:
        return {} if self.scaler is None else self.scaler.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a saved scaler; a state saved in another precision (or none) is ignored:
        the scaler then starts afresh, as a new fp16 run's does."""
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)


def to_device(batch: Batch, device: torch.device) -> Batch:
    """`batch` on `device`. To a GPU, each tensor field of a batch dataclass is first copied
    into pinned (page-locked) host memory, so that the copy to the GPU runs asynchronously
    (non_blocking) and the host goes on to build the next batch; anything else, and every
    batch to the CPU, moves with its own `.to(device)`."""
    if device.type != "cuda" or not dataclasses.is_dataclass(batch):
        return batch.to(device)
    fields = dataclasses.fields(cast(Any, batch))
    moved = {f.name: value.pin_memory().to(device, non_blocking=True) for f in fields
             if isinstance(value := getattr(batch, f.name), torch.Tensor)}
    return cast(Batch, dataclasses.replace(cast(Any, batch), **moved))
