"""Multi-head attention (Vaswani et al. 2017, sec. 3.2.2) whose heads use the family's
`scaled_dot` score and attnlab.attention's `attend` (masked softmax, weighted sum):

    MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W_O
    head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(d_k)) V W_V^h          (eq. 1)

The key side is split out (`project`) so that it is computed once: once per source sentence for
cross-attention, once per target position for a decoder's self-attention cache. Heads ride in
the batch axis, (B, H, T, d_k) -> (B*H, T, d_k), so the score and `attend` see the batched
(B, Tq, Tk) shapes they are written for.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnlab.attention import ScoreDims, attend, build_score


@dataclass
class KeyValues:
    """Keys K W_K and values V W_V of every head, each (B, H, Tk, d_k)."""

    keys: Tensor
    values: Tensor

    def extend(self, new: KeyValues) -> KeyValues:
        """These followed by `new` along the key axis (a decoder's cache, one step longer)."""
        return KeyValues(torch.cat([self.keys, new.keys], 2),
                         torch.cat([self.values, new.values], 2))


class MultiHeadAttention(nn.Module):
    """H scaled-dot heads of size d_k = model_dim / H over keys of size key_dim (default
    model_dim: self-attention; the encoder's width for cross-attention)."""

    def __init__(self, model_dim: int, heads: int, key_dim: int | None = None):
        super().__init__()
        if model_dim % heads:
            raise ValueError(f"multi-head attention splits model_dim={model_dim} into {heads} "
                             f"heads: it must be a multiple of heads")
        key_dim = key_dim or model_dim
        self.heads, self.head_dim = heads, model_dim // heads
        self.query_proj = nn.Linear(model_dim, model_dim)  # W_Q of every head, side by side
        self.key_proj = nn.Linear(key_dim, model_dim)  # W_K
        self.value_proj = nn.Linear(key_dim, model_dim)  # W_V
        self.output_proj = nn.Linear(model_dim, model_dim)  # W_O
        self.score = build_score("scaled_dot", ScoreDims(self.head_dim, self.head_dim))

    def split(self, x: Tensor) -> Tensor:
        """(B, T, H * d_k) -> (B, H, T, d_k)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_dim).transpose(1, 2)

    def project(self, keys: Tensor) -> KeyValues:
        """The key side, once: keys (B, Tk, key_dim) -> KeyValues (B, H, Tk, d_k)."""
        return KeyValues(self.split(self.key_proj(keys)), self.split(self.value_proj(keys)))

    def forward(self, query: Tensor, memory: KeyValues,
                mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """query (B, Tq, D) over memory (B, H, Tk, d_k); mask (B or 1, Tq or 1, Tk) bool,
        True = a key the query may read. Returns output (B, Tq, D) and weights (B, H, Tq, Tk)."""
        batch, length = query.shape[:2]
        keys = memory.keys.shape[2]
        folded = batch * self.heads
        query_heads = self.split(self.query_proj(query)).reshape(folded, length, self.head_dim)
        scores = self.score(query_heads, self.score.project_keys(
            memory.keys.reshape(folded, keys, self.head_dim)))  # (B*H, Tq, Tk)
        if mask is not None:  # the same mask for every head
            mask = mask.unsqueeze(1).expand(batch, self.heads, mask.shape[1], keys)
            mask = mask.reshape(folded, -1, keys)  # (B*H, Tq or 1, Tk)
        context, weights = attend(scores, memory.values.reshape(folded, keys, self.head_dim),
                                  mask)  # (B*H, Tq, d_k), (B*H, Tq, Tk)
        context = context.view(batch, self.heads, length, self.head_dim).transpose(1, 2)
        output: Tensor = self.output_proj(context.reshape(batch, length, -1))  # (B, Tq, D)
        return output, weights.view(batch, self.heads, length, keys)
