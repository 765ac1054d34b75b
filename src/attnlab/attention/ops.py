"""Two kernels the scores are built on, written for this CPU's speed: gathering each query's
window of keys, and tanh(a + b) in one buffer."""

from __future__ import annotations

import torch
from torch import Tensor


def gather_rows(rows: Tensor, positions: Tensor) -> Tensor:
    """Pick rows per query: rows (B, Tk, H), positions (B, Tq, W) in [0, Tk) -> (B, Tq, W, H)."""
    batch, num_rows, hidden = rows.shape
    # index_select copies whole rows; gather would read one int64 index per element.
    flat = positions + torch.arange(batch, device=positions.device).view(-1, 1, 1) * num_rows
    picked = rows.reshape(batch * num_rows, hidden).index_select(0, flat.reshape(-1))
    return picked.view(*positions.shape, hidden)


class AddTanh(torch.autograd.Function):
    """tanh(a + b), broadcasting, computed in one buffer as 2 sigmoid(2(a + b)) - 1.

    Same function, but on this CPU build torch.tanh is ~10x slower than torch.sigmoid, and the
    additive score spends most of its time here (B x Tq x Tk x H elements).
    """

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor) -> Tensor:
        out = torch.add(a, b).mul_(2).sigmoid_().mul_(2).sub_(1)
        ctx.save_for_backward(out)
        ctx.shapes = a.shape, b.shape
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        (out,) = ctx.saved_tensors
        grad = grad * (1 - out * out)  # d tanh(x) / dx = 1 - tanh(x)^2
        shape_a, shape_b = ctx.shapes
        return grad.sum_to_size(shape_a), grad.sum_to_size(shape_b)
