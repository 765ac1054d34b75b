"""Local attention's weights as windows: W = 2D + 1 consecutive source positions per query,
never a dense (..., S) row until a reader asks for one.

    weights = WindowWeights(start, weights, source_len)  # start (R...), weights (R..., W)
    weights.dense()                                      # (R..., S), exactly 0 outside windows
    as_dense(weights, source_len)                        # the same for dense weights too

Decoders keep local attention in this form (training, greedy and beam search), so a long
source never costs B x T x S; plots, alignments and penalties call `as_dense`. Global and
hard attention keep their dense (..., S) tensor: `Weights` is either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class WindowWeights:
    """Attention weights over windows of consecutive source positions.

    start (R...) long: the source position of each window's first slot, round(p_t) - D; it may
    lie before 0 or the window may run past the end, where the slots hold weight 0.
    weights (R..., W): the weights of positions start, ..., start + W - 1.
    source_len: S, the source positions (padding included) the windows lie in.
    R are the leading axes, e.g. (B, T) for a target or (B,) for one decoder step.
    """

    start: Tensor
    weights: Tensor
    source_len: int

    @property
    def width(self) -> int:
        """W = 2D + 1, the slots of a window."""
        return int(self.weights.shape[-1])

    def positions(self) -> Tensor:
        """(R..., W) the source position of every slot (not clamped: may lie outside [0, S))."""
        slots = torch.arange(self.width, device=self.start.device)
        return self.start.unsqueeze(-1) + slots

    def map(self, rows: Callable[[Tensor], Tensor]) -> WindowWeights:
        """Apply `rows` to the leading axes of start and weights alike: an index_select, a
        squeeze, an indexing such as `lambda t: t[row, :length]`."""
        return WindowWeights(rows(self.start), rows(self.weights), self.source_len)

    @classmethod
    def join(cls, parts: Sequence[WindowWeights],
             join: Callable[[list[Tensor]], Tensor]) -> WindowWeights:
        """Join parts along a leading axis, e.g. `lambda ts: torch.cat(ts, dim=1)`."""
        return cls(join([p.start for p in parts]), join([p.weights for p in parts]),
                   parts[0].source_len)

    def dense(self, source_len: int | None = None) -> Tensor:
        """(R..., S) weights, exactly 0 outside each window; `source_len` cuts (or pads with
        zeros) to another length, e.g. a sentence's real positions. Differentiable."""
        length = self.source_len if source_len is None else source_len
        dense = self.weights.new_zeros(*self.weights.shape[:-1], length)
        if length == 0 or self.weights.numel() == 0:
            return dense
        positions = self.positions()
        inside = (positions >= 0) & (positions < length)
        # Slots outside [0, length) are clamped onto a real column and add exactly 0 there.
        weights = self.weights.masked_fill(~inside, 0.0)
        return dense.scatter_add_(-1, positions.clamp(0, length - 1), weights)

    @classmethod
    def from_dense(cls, dense: Tensor, start: Tensor, width: int) -> WindowWeights:
        """The windows of dense weights (R..., S) that are 0 outside them: start (R...) long."""
        length = dense.shape[-1]
        positions = start.unsqueeze(-1) + torch.arange(width, device=start.device)
        inside = (positions >= 0) & (positions < length)
        if length == 0:
            return cls(start, dense.new_zeros(*start.shape, width), 0)
        weights = dense.gather(-1, positions.clamp(0, length - 1)).masked_fill(~inside, 0.0)
        return cls(start, weights, length)


Weights = Tensor | WindowWeights  # dense (..., S), or windows


def as_dense(weights: Weights, source_len: int | None = None) -> Tensor:
    """Dense (..., S) weights of either form; `source_len` keeps the first positions only (a
    sentence's real ones) and must not exceed S for dense weights."""
    if isinstance(weights, WindowWeights):
        return weights.dense(source_len)
    if source_len is None or source_len == weights.shape[-1]:
        return weights
    if source_len > weights.shape[-1]:
        raise ValueError(f"as_dense: {source_len} positions asked of weights over "
                         f"{weights.shape[-1]}")
    return weights[..., :source_len]


def map_weights(weights: Weights, rows: Callable[[Tensor], Tensor]) -> Weights:
    """`rows` (an indexing of the leading axes) applied to weights of either form."""
    return weights.map(rows) if isinstance(weights, WindowWeights) else rows(weights)


def join_weights(parts: Sequence[Weights], join: Callable[[list[Tensor]], Tensor]) -> Weights:
    """Join weights of one form along a leading axis (see WindowWeights.join)."""
    windows = [p for p in parts if isinstance(p, WindowWeights)]
    if not windows:
        return join([p for p in parts if isinstance(p, Tensor)])
    if len(windows) != len(parts):
        raise TypeError("join_weights: window and dense weights cannot be joined")
    return WindowWeights.join(windows, join)
