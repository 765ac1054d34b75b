"""What a task (translation, captioning, language modelling) gives the generic training loop.

The loop owns optimisation, schedules, checkpoints, logging and distribution; the task owns
the model, the data and the meaning of "loss" and "validation". A task is any object with
these attributes (no base class needed):

    class MyTask:
        model: nn.Module
        sampler: BucketBatchSampler
        def make_batch(self, indices): ...   # -> has .to(device) and .num_target_tokens
        def loss(self, model, batch): ...     # -> LossOutput
        def validate(self, model): ...        # -> Validation
        def signature(self): ...              # -> JSON-able dict describing the model

and, for `run_experiment`, the files it keeps in the run directory (its vocabularies), which
are written only once every check of the run has passed, and whether it reads
train.guided_alignment (class attributes: `run_experiment` asks the class before building it):

        run_files = ("vocab.json", "vocab.model")  # their names; () when it keeps none
        guides_attention = False                   # True: it trains towards guided alignment
        def save_files(self, directory): ...       # write run_files there (atomically)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Self, runtime_checkable

import torch
from torch import nn


@dataclass
class LossOutput:
    """One batch's training loss.

    loss: scalar tensor to backpropagate (usually nll_sum / tokens, plus any regulariser);
    nll_sum: summed negative log-likelihood of the target tokens, for the logged per-token loss:
    a detached scalar tensor (read from the device only when the loop logs) or a float;
    tokens: the number of target tokens nll_sum covers.
    """

    loss: torch.Tensor
    nll_sum: float | torch.Tensor
    tokens: int


@dataclass
class Validation:
    """One validation's results, all reported to TensorBoard.

    metrics: name -> number (e.g. {"bleu": 21.3, "loss": 2.9}); the early-stopping metric
    must be among them. images: name -> (H, W, 3) uint8 array or a matplotlib Figure (e.g. an
    attention heatmap). text: name -> string (e.g. sample translations).
    """

    metrics: dict[str, float]
    images: dict[str, Any] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)


class BatchLike(Protocol):
    """A batch the task builds: movable to a device, and counting its target tokens."""

    num_target_tokens: int

    def to(self, device: torch.device | str) -> Self: ...


class SamplerLike(Protocol):
    """BucketBatchSampler's resumable interface: lists of example indices, epoch by epoch."""

    def __iter__(self) -> Iterator[list[int]]: ...

    def __len__(self) -> int: ...

    def set_epoch(self, epoch: int) -> None: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


@runtime_checkable
class Task(Protocol):
    """The caller's side of `train()`.

    - model: the module to train (the loop moves it to the device and, under torchrun, wraps
      it in DistributedDataParallel before handing it to `loss`).
    - sampler: yields each epoch's batches of example indices; identically seeded on every
      rank.
    - make_batch(indices): the padded batch for these examples, on the CPU.
    - loss(model, batch): compute the loss by calling `model(...)` (its forward: under DDP
      only the forward call synchronises gradients); batch is already on the device.
    - validate(model): evaluate the unwrapped model (in eval mode, without gradients, rank 0).
    - signature(): JSON-able description of the architecture (class + config) stored with
      each checkpoint; resuming or loading with a different signature is refused.
    - run_files: the names of the files the task keeps in the run directory (its
      vocabularies), () when none; save_files(directory) writes them (nothing when none).
    - guides_attention: whether the task reads train.guided_alignment (a class attribute).
    """

    run_files: tuple[str, ...]
    guides_attention: bool

    # Read-only here, so a task may hold a narrower type (a Seq2Seq, a BucketBatchSampler).
    @property
    def model(self) -> nn.Module: ...

    @property
    def sampler(self) -> SamplerLike: ...

    def make_batch(self, indices: list[int]) -> BatchLike: ...

    def loss(self, model: nn.Module, batch: Any) -> LossOutput: ...

    def validate(self, model: nn.Module) -> Validation: ...

    def signature(self) -> dict: ...

    def save_files(self, directory: Path) -> None: ...

