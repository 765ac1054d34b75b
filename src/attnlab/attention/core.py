"""The two operations every mechanism shares: masked softmax and the weighted sum.

Masks are bool with True = real position, everywhere in attnlab. A query with no real key gets
all-zero weights (and a zero context), never NaN, so padded rows cannot poison a batch.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def masked_softmax(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax over the last axis that gives exactly 0 to masked positions.

    scores (..., Tk); mask broadcastable to scores, bool, True = real position.
    Returns weights shaped like scores: rows sum to 1 over real positions, and a row with no real
    position is all zeros.
    """
    if not (torch.is_grad_enabled() and scores.requires_grad):   # decoding: no Function call
        return _masked_softmax(scores, mask)
    weights: Tensor = _MaskedSoftmax.apply(scores, mask)  # type: ignore[no-untyped-call]
    return weights


def _masked_softmax(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    # A finite fill (not -inf) keeps an all-masked row finite through softmax; the masked_fill
    # afterwards makes the zeros exact.
    lowest = torch.finfo(scores.dtype).min
    return torch.softmax(scores.masked_fill(~mask, lowest), dim=-1).masked_fill(~mask, 0.0)


class _MaskedSoftmax(torch.autograd.Function):
    """`masked_softmax` with its backward written as products and sums, y (g - sum(g y)):
    the same numbers as autograd's, but the gradients of many output rows at once
    (attnlab.explain.gradients, a backward batched over rows) then run batched, where
    softmax's and masked_fill's own backward fall back to one row at a time."""

    @staticmethod
    def forward(ctx: Any, scores: Tensor, mask: Tensor | None) -> Tensor:
        weights = _masked_softmax(scores, mask)
        ctx.save_for_backward(weights)
        return weights

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        weights: Tensor = ctx.saved_tensors[0]   # 0 where masked: so is the gradient there
        product = grad * weights
        return product - weights * product.sum(-1, keepdim=True), None


def attend(scores: Tensor, values: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Normalise scores over keys and mix the values.

    scores (B, Tq, Tk); values (B, Tk, Dv); mask broadcastable to (B, Tq, Tk), True = real key.
    Returns context (B, Tq, Dv) and weights (B, Tq, Tk).
    """
    weights = masked_softmax(scores, mask)  # (B, Tq, Tk)
    return weights @ values, weights  # (B, Tq, Dv), (B, Tq, Tk)


def key_mask_for_scores(mask: Tensor | None, keys: Tensor, queries: int, who: str) -> Tensor | None:
    """Check a user mask against the keys and shape it to broadcast over (B, Tq, Tk).

    mask (B, Tk) or (B, Tq, Tk) bool; keys (B, Tk, Dk). Returns (B, 1, Tk), (B, Tq, Tk) or None.
    `who` names the mechanism in the error message.
    """
    if mask is None:
        return None
    batch, length = keys.shape[0], keys.shape[1]
    if mask.dtype != torch.bool:
        raise ValueError(f"{who}: mask must be bool (True = real position), got {mask.dtype}")
    if mask.shape == (batch, length):
        return mask.unsqueeze(1)
    if mask.shape == (batch, queries, length):
        return mask
    raise ValueError(
        f"{who}: mask shape {tuple(mask.shape)} does not match keys {tuple(keys.shape)}; "
        f"expected (B, Tk) = ({batch}, {length}) or (B, Tq, Tk) = ({batch}, {queries}, {length})"
    )


def as_query_sequence(query: Tensor, who: str) -> tuple[Tensor, bool]:
    """Accept one decoder step (B, Dq) or a sequence (B, Tq, Dq); return (B, Tq, Dq), was_step."""
    if query.dim() == 2:
        return query.unsqueeze(1), True
    if query.dim() == 3:
        return query, False
    raise ValueError(f"{who}: query must be (B, Dq) or (B, Tq, Dq), got shape {tuple(query.shape)}")


def check_keys_values(keys: Tensor, values: Tensor, batch: int, who: str) -> None:
    """Keys (B, Tk, Dk) and values (B, Tk, Dv) must agree with each other and the query batch."""
    if keys.dim() != 3:
        raise ValueError(f"{who}: keys must be (B, Tk, Dk), got shape {tuple(keys.shape)}")
    if values.dim() != 3 or values.shape[:2] != keys.shape[:2]:
        raise ValueError(
            f"{who}: values {tuple(values.shape)} must be (B, Tk, Dv) with the keys' "
            f"B and Tk {tuple(keys.shape[:2])}"
        )
    if keys.shape[0] != batch:
        raise ValueError(f"{who}: query batch {batch} != keys batch {keys.shape[0]}")
