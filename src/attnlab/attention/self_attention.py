"""Causal self-attention: position t attends to the positions before it (Cheng et al. 2016).

The LSTMN reads its hidden tape this way; here the same thing for a finished sequence, with any
score of SCORES.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .global_attention import Attention
from .scores import Score


def causal_mask(length: int, device: torch.device | None = None, *, strict: bool = True) -> Tensor:
    """(T, T) bool, row t True at the positions t may read: i < t (strict) or i <= t."""
    rows = torch.arange(length, device=device)
    return rows.unsqueeze(0) < rows.unsqueeze(1) + (0 if strict else 1)


class CausalSelfAttention(nn.Module):
    """Each position attends over the earlier real positions of the same sequence.

    CausalSelfAttention(score, include_self=False) with a built Score, or with a SCORES name and
    its sizes (key_dim defaults to query_dim).
    forward(queries, keys=None, values=None, mask=None) -> (context, weights):
    queries (B, T, Dq); keys (B, T, Dk), default the queries; values (B, T, Dv), default the keys;
    mask (B, T) bool, True = real. Returns context (B, T, Dv) and weights (B, T, T) with zeros on
    and above the diagonal (on it too when `include_self` is False): the first position, having
    nothing earlier, gets zero weights and a zero context.
    """

    def __init__(self, score: Score | str, *, include_self: bool = False,
                 **dims: int | float | None):
        super().__init__()
        if isinstance(score, str):  # keys default to the queries: one size
            dims.setdefault("key_dim", dims.get("query_dim"))
        self.attention = Attention(score, **dims)
        self.include_self = include_self

    def forward(
        self,
        queries: Tensor,
        keys: Tensor | None = None,
        values: Tensor | None = None,
        mask: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        keys = queries if keys is None else keys
        length = keys.shape[1]
        allowed = causal_mask(length, keys.device, strict=not self.include_self)  # (T, T)
        allowed = allowed.unsqueeze(0).expand(keys.shape[0], length, length)
        if mask is not None:
            if mask.shape != keys.shape[:2]:
                raise ValueError(
                    f"CausalSelfAttention: mask shape {tuple(mask.shape)} does not match "
                    f"the sequence {tuple(keys.shape[:2])}"
                )
            allowed = allowed & mask.unsqueeze(1)
        out: tuple[Tensor, Tensor] = self.attention(queries, keys, values, allowed)
        return out
