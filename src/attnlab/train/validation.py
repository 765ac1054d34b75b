"""What validation shares across tasks: the summed loss over batches, and perplexity."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import torch
from torch import nn

from .runs import perplexity
from .task import BatchLike, LossOutput

__all__ = ["perplexity", "validation_nll"]

Batch = TypeVar("Batch", bound=BatchLike)  # the batches of one task


@torch.no_grad()
def validation_nll(loss: Callable[[nn.Module, Batch], LossOutput], model: nn.Module,
                   batches: Iterable[Batch]) -> tuple[float, int]:
    """Summed NLL and target-token count of `loss(model, batch)` over the batches, each moved
    to the model's device first (teacher forcing; call with the model in eval mode)."""
    device = next(model.parameters()).device
    nll: float | torch.Tensor = 0.0  # summed on the device, read once at the end
    tokens = 0
    for batch in batches:
        result = loss(model, batch.to(device))
        nll, tokens = nll + result.nll_sum, tokens + result.tokens
    return float(nll), tokens
