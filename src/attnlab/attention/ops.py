"""The kernels the scores are built on, written for this CPU's speed: gathering each query's
window of keys, and tanh through sigmoid (`fast_tanh`, with tanh(a + b) in one buffer)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def gather_rows(rows: Tensor, positions: Tensor) -> Tensor:
    """Pick rows per query: rows (B, Tk, H), positions (B, Tq, W) in [0, Tk) -> (B, Tq, W, H)."""
    batch, num_rows, hidden = rows.shape
    # index_select copies whole rows; gather would read one int64 index per element.
    flat = positions + torch.arange(batch, device=positions.device).view(-1, 1, 1) * num_rows
    picked = rows.reshape(batch * num_rows, hidden).index_select(0, flat.reshape(-1))
    return picked.view(*positions.shape, hidden)


def fast_tanh(x: Tensor) -> Tensor:
    """tanh(x), computed as 2 sigmoid(2x) - 1 in one buffer; gradient 1 - tanh(x)^2.

    The same function as torch.tanh, faster on this CPU build (x86-64 AVX-512, torch 2.13 CPU):
    torch.tanh takes 2.5x as long at (64, 256), 3.6x at (64, 512), 5.3x at (64, 20, 256) and
    5.5x at (64, 30, 512) (float32, one thread, forward, medians of 500 calls, the same in
    repeated runs of `python benchmarks/attention.py --only tanh` on a lightly loaded machine).
    """
    out: Tensor = _FastTanh.apply(x)  # type: ignore[no-untyped-call]  # torch leaves apply untyped
    return out


def tanh_of_double_(doubled: Tensor) -> Tensor:
    """`fast_tanh`'s kernel, for a caller that already holds 2x in a buffer of its own (a sum
    scaled on the way, torch.add(a, b, alpha=2)): tanh(x), written over `doubled` in place.
    No autograd: for use inside a torch.autograd.Function's forward."""
    return doubled.sigmoid_().mul_(2).sub_(1)


class _FastTanh(torch.autograd.Function):
    """`fast_tanh` under autograd: the output is saved, as torch.tanh saves it."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        out = tanh_of_double_(torch.mul(x, 2))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        out: Tensor = ctx.saved_tensors[0]
        return grad * (1 - out * out)  # d tanh(x) / dx = 1 - tanh(x)^2


class AddTanh(torch.autograd.Function):
    """tanh(a + b), broadcasting, in one buffer (`fast_tanh`'s kernel on 2(a + b)); the additive
    score spends most of its time here (B x Tq x Tk x H elements)."""

    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor) -> Tensor:
        out = tanh_of_double_(torch.add(a, b).mul_(2))
        ctx.save_for_backward(out)
        ctx.shapes = a.shape, b.shape
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor]:
        out: Tensor = ctx.saved_tensors[0]
        grad = grad * (1 - out * out)  # d tanh(x) / dx = 1 - tanh(x)^2
        shape_a, shape_b = ctx.shapes
        return sum_to(grad, shape_a), sum_to(grad, shape_b)


def sum_to(grad: Tensor, shape: torch.Size) -> Tensor:
    """grad summed over the axes `shape` broadcast over (sum_to_size, but with sum, which a
    backward batched over rows with vmap runs batched; sum_to_size runs one row at a time)."""
    lead = grad.dim() - len(shape)
    axes = [*range(lead), *(lead + i for i, size in enumerate(shape)
                            if size == 1 and grad.shape[lead + i] != 1)]
    return grad.sum(axes, keepdim=True).view(shape) if axes else grad


def add_tanh(a: Tensor, b: Tensor) -> Tensor:
    """tanh(a + b), broadcasting, differentiable: `AddTanh`."""
    out: Tensor = AddTanh.apply(a, b)  # type: ignore[no-untyped-call]  # as in fast_tanh
    return out
