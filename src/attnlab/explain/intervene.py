"""Decode with other attention weights than the model's: the hook every faithfulness test uses.

    with intervening(model, uniform):        # every step reads uniform weights
        run.translate(lines)
    with intervening(model, at_steps(edit)):  # batch row b edits step rows[b] only

The decoder's attention layer hands each call's dense weights (B, Tq, S), the source mask
(B, S) and the call's first target step to the intervention and reads what it returns; the
context is recomputed from those weights (attnlab.models.attention_layer).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch
from torch import Tensor

from attnlab.models import Seq2Seq
from attnlab.models.attention_layer import AttentionLayer, Intervention

# one batch row's weights at its own step: (weights (B, S), mask (B, S), batch rows (B,)) -> (B, S)
RowEdit = Callable[[Tensor, Tensor, Tensor], Tensor]


def attention_layer(model: Seq2Seq) -> AttentionLayer:
    """The decoder's attention layer; ValueError for a decoder without attention."""
    layer = model.decoder.attention
    if layer is None:
        raise ValueError("this model's decoder has no attention to intervene on")
    return layer


@contextlib.contextmanager
def intervening(model: Seq2Seq, intervention: Intervention) -> Iterator[None]:
    """Within the block the decoder reads `intervention`'s weights; restored afterwards."""
    layer = attention_layer(model)
    before, layer.intervention = layer.intervention, intervention
    try:
        yield
    finally:
        layer.intervention = before


def uniform(weights: Tensor, mask: Tensor, step: int) -> Tensor:
    """Equal weight on every real source position (Wiegreffe & Pinter 2019's baseline)."""
    real = mask.to(weights.dtype).unsqueeze(1).expand_as(weights)  # (B, Tq, S)
    return real / real.sum(-1, keepdim=True).clamp_min(1.0)


def at_steps(rows: Tensor, edit: RowEdit) -> Intervention:
    """An intervention that changes batch row b's weights at target step rows[b] only, by
    `edit`, and leaves every other step as the model attends: T copies of one sentence, row t
    edited at step t, test every step in one teacher-forced pass."""

    def intervention(weights: Tensor, mask: Tensor, first: int) -> Tensor:
        offsets = rows - first                                          # (B,)
        hit = (offsets >= 0) & (offsets < weights.shape[1])
        if not bool(hit.any()):
            return weights
        batch = hit.nonzero().squeeze(1)
        where = offsets[batch]
        edited = edit(weights[batch, where], mask[batch], batch)        # (b, S)
        weights = weights.clone()
        weights[batch, where] = edited.to(weights.dtype)
        return weights

    return intervention


def renormalised_without(position: Tensor) -> RowEdit:
    """Zero each row's weight at position[row] and renormalise the rest (Serrano & Smith
    2019's erasure); a row with no weight left keeps its weights."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        dropped = weights.scatter(1, position[batch].unsqueeze(1), 0.0)
        total = dropped.sum(1, keepdim=True)
        return torch.where(total > 0, dropped / total.clamp_min(1e-30), weights)

    return edit


def permuted(orders: Tensor) -> RowEdit:
    """Each row's weights over its real positions reordered by orders[row] (Jain & Wallace
    2019's permutation): orders (B, S) a permutation of the real positions, padding fixed."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return weights.gather(1, orders[batch])

    return edit


def replaced(new_weights: Tensor) -> RowEdit:
    """Each row's weights replaced by new_weights[row] (B, S): adversarial attention."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return new_weights[batch]

    return edit
