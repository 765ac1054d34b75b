"""Read with other attention weights than the model's: the hook every faithfulness test uses.

    with intervening(model, uniform):        # every step reads uniform weights
        run.translate(lines)
    with intervening(model, at_steps(rows, edit)):  # batch row b edits step rows[b] only
    with intervening(model, uniform, layer=0):      # a Transformer's first layer, every head

The hooked layer (a Seq2Seq decoder's attention, a Transformer decoder layer's cross-attention,
or an LSTMN's layer) hands each call's dense weights (B, Tq, K), the mask and the call's first
step to the intervention and reads what it returns; the context is recomputed from those
weights (attnlab.models.attention_layer, .multihead, .lstmn). A Transformer's cross-attention
hands over each of its H heads' weights in turn, so an intervention replaces the weights of
every head of its layer alike. At step t an LSTMN layer reads its t earlier positions, so K = t
there; a decoder reads every source position, K = S.

`layer` counts the model's attention layers from 0 (negative from the last, as Python does);
the default, the last, is the attention the rest of attnlab reads: a recurrent decoder's only
one, a Transformer's last layer (whose head average is DecoderOutput.attention), an LSTMN's top
layer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol, cast

import torch
from torch import Tensor

from attnlab.models import LSTMN, LanguageModel, Seq2Seq
from attnlab.models.attention_layer import Intervention
from attnlab.models.lstmn import LSTMNLayer

# one batch row's weights at its own step: (weights (B, K), mask, batch rows (B,)) -> (B, K)
RowEdit = Callable[[Tensor, Tensor, Tensor], Tensor]


class Hooked(Protocol):
    """A layer whose attention an intervention replaces (AttentionLayer, MultiHeadAttention,
    LSTMNLayer)."""

    intervention: Intervention | None


def attention_layers(model: Seq2Seq | LanguageModel) -> list[Hooked]:
    """Every attention layer of the model an intervention can replace, first to last: a
    recurrent decoder's one, a Transformer decoder's cross-attention of each layer, an LSTMN
    language model's layers; ValueError for a model without attention."""
    if isinstance(model, LanguageModel):
        if not isinstance(model.reader, LSTMN):
            raise ValueError("this language model has no self-attention to intervene on")
        return [cast(LSTMNLayer, layer) for layer in model.reader.layers]
    found = model.decoder.attention_layers()
    if not found:
        raise ValueError("this model's decoder has no attention to intervene on")
    return [cast(Hooked, layer) for layer in found]


def attention_layer(model: Seq2Seq | LanguageModel, layer: int = -1) -> Hooked:
    """The model's attention layer number `layer` (attention_layers; default the last, the
    one attnlab reads); ValueError naming the layers there are."""
    found = attention_layers(model)
    if not -len(found) <= layer < len(found):
        raise ValueError(f"no attention layer {layer}: this model has {len(found)} "
                         f"(0 to {len(found) - 1})")
    return found[layer]


@contextlib.contextmanager
def intervening(model: Seq2Seq | LanguageModel, intervention: Intervention,
                layer: int = -1) -> Iterator[None]:
    """Within the block the model's attention layer `layer` (default the last, the one attnlab
    reads) reads `intervention`'s weights, every head of it for a Transformer; restored
    afterwards. (An LSTMN layer so hooked runs step by step: the fused kernel has no hook.)"""
    hooked = attention_layer(model, layer)
    before, hooked.intervention = hooked.intervention, intervention
    try:
        yield
    finally:
        hooked.intervention = before


@contextlib.contextmanager
def without_interventions(model: Seq2Seq | LanguageModel) -> Iterator[None]:
    """Within the block every attention layer of the model reads its own weights."""
    layers = attention_layers(model)
    before = [layer.intervention for layer in layers]
    for layer in layers:
        layer.intervention = None
    try:
        yield
    finally:
        for layer, intervention in zip(layers, before, strict=True):
            layer.intervention = intervention


def edited(model: Seq2Seq | LanguageModel, rows: Tensor, edit: RowEdit | None, layer: int,
           copies: Tensor | None = None) -> contextlib.AbstractContextManager[None]:
    """Batch row b's weights at step rows[b] of attention layer `layer` changed by `edit`
    (nothing changed without one), which sees row b as copy copies[b] (default b): a forced
    reading that runs a subset of its copies hands `edit` their places among all of them."""
    if edit is None:
        return contextlib.nullcontext()
    if copies is not None:
        edit = _renumbered(edit, copies)
    return intervening(model, at_steps(rows, edit), layer)


def _renumbered(edit: RowEdit, copies: Tensor) -> RowEdit:
    def renumbered(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return edit(weights, mask, copies[batch])

    return renumbered


def uniform(weights: Tensor, mask: Tensor, step: int) -> Tensor:
    """Equal weight on every real position (Wiegreffe & Pinter 2019's baseline)."""
    real = mask.to(weights.dtype).unsqueeze(1).expand_as(weights)  # (B, Tq, K)
    return real / real.sum(-1, keepdim=True).clamp_min(1.0)


def at_steps(rows: Tensor, edit: RowEdit) -> Intervention:
    """An intervention that changes batch row b's weights at step rows[b] only, by `edit`, and
    leaves every other step as the model attends: copies of one sentence, each edited at its
    own step, test many steps in one teacher-forced pass."""

    def intervention(weights: Tensor, mask: Tensor, first: int) -> Tensor:
        offsets = rows - first                                          # (B,)
        hit = (offsets >= 0) & (offsets < weights.shape[1])
        if not bool(hit.any()):
            return weights
        batch = hit.nonzero().squeeze(1)
        where = offsets[batch]
        edited = edit(weights[batch, where], mask[batch], batch)        # (b, K)
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


def renormalised_over(keep: Tensor) -> RowEdit:
    """Each row's weights outside keep[row, :K] zeroed and the rest renormalised (ERASER's
    rationale kept, or taken away: attnlab.explain.eraser); keep (B, width) bool. A row left
    with no weight reads nothing: its weights all zero, a zero context (hard attention in
    argmax mode then reads position 0)."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        kept = weights * keep[batch, : weights.shape[1]].to(weights.dtype)
        total = kept.sum(1, keepdim=True)
        return kept / torch.where(total > 0, total, 1.0)   # no weight left: stays zero

    return edit


def permuted(orders: Tensor) -> RowEdit:
    """Each row's K weights reordered by orders[row, :K] (Jain & Wallace 2019's permutation):
    orders (B, width), each row's first K a permutation of 0..K-1."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return weights.gather(1, orders[batch, : weights.shape[1]])

    return edit


def replaced(new_weights: Tensor) -> RowEdit:
    """Each row's K weights replaced by new_weights[row, :K] (B, width): adversarial
    attention."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return new_weights[batch, : weights.shape[1]]

    return edit
