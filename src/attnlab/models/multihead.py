"""Multi-head attention (Vaswani et al. 2017, sec. 3.2.2) whose heads use the family's
`scaled_dot` score and attnlab.attention's `attend` (masked softmax, weighted sum):

    MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W_O
    head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(d_k)) V W_V^h          (eq. 1)

The key side is split out (`project`) so that it is computed once: once per source sentence for
cross-attention, once per target position for a decoder's self-attention cache. Heads ride in
the batch axis, (B, H, T, d_k) -> (B*H, T, d_k), so the score and `attend` see the batched
(B, Tq, Tk) shapes they are written for.

`intervention`, when set (attnlab.explain.intervening, for the faithfulness tests: a decoder
layer's cross-attention), is the hook of attnlab.models.attention_layer: it is given each head's
weights (B, Tq, Tk) in turn, the key mask (B, Tk) and the call's first target step, and every
head reads what it returns instead, its context recomputed from them. Each head is handed over
alone, with the batch as it is, so that an intervention that edits batch row b at its own step
(attnlab.explain.intervene.at_steps) edits every head of that row alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnlab.attention import ScoreDims, attend, build_score

from .attention_layer import Intervention


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
        self.intervention: Intervention | None = None

    def split(self, x: Tensor) -> Tensor:
        """(B, T, H * d_k) -> (B, H, T, d_k)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_dim).transpose(1, 2)

    def project(self, keys: Tensor) -> KeyValues:
        """The key side, once: keys (B, Tk, key_dim) -> KeyValues (B, H, Tk, d_k)."""
        return KeyValues(self.split(self.key_proj(keys)), self.split(self.value_proj(keys)))

    def forward(self, query: Tensor, memory: KeyValues, mask: Tensor | None = None,
                step: int = 0) -> tuple[Tensor, Tensor]:
        """query (B, Tq, D) over memory (B, H, Tk, d_k); mask (B or 1, Tq or 1, Tk) bool,
        True = a key the query may read; step: the first query's target position (what an
        intervention is told). Returns output (B, Tq, D) and weights (B, H, Tq, Tk)."""
        batch, length = query.shape[:2]
        keys = memory.keys.shape[2]
        folded = batch * self.heads
        query_heads = self.split(self.query_proj(query)).reshape(folded, length, self.head_dim)
        scores = self.score(query_heads, self.score.project_keys(
            memory.keys.reshape(folded, keys, self.head_dim)))  # (B*H, Tq, Tk)
        folded_mask = None
        if mask is not None:  # the same mask for every head
            folded_mask = mask.unsqueeze(1).expand(batch, self.heads, mask.shape[1], keys)
            folded_mask = folded_mask.reshape(folded, -1, keys)  # (B*H, Tq or 1, Tk)
        values = memory.values.reshape(folded, keys, self.head_dim)
        context, weights = attend(scores, values, folded_mask)  # (B*H, Tq, d_k), (B*H, Tq, Tk)
        if self.intervention is not None:
            weights = self._intervened(weights.view(batch, self.heads, length, keys), mask,
                                       step).reshape(folded, length, keys)
            context = weights @ values  # (B*H, Tq, d_k): read from the weights given
        context = context.view(batch, self.heads, length, self.head_dim).transpose(1, 2)
        output: Tensor = self.output_proj(context.reshape(batch, length, -1))  # (B, Tq, D)
        return output, weights.view(batch, self.heads, length, keys)

    def _intervened(self, weights: Tensor, mask: Tensor | None, step: int) -> Tensor:
        """The intervention's weights (B, H, Tq, Tk) for the model's, head by head; `mask` as
        `forward` was given it, (B or 1, 1, Tk), or None (every key real)."""
        assert self.intervention is not None  # forward calls this only when one is set
        batch, heads, _, keys = weights.shape
        if mask is None:
            real = weights.new_ones(batch, keys, dtype=torch.bool)
        elif mask.shape[1] != 1:
            raise ValueError("an intervention replaces weights over keys that every query "
                             "may read (cross-attention's), not a causal self-attention's")
        else:
            real = mask[:, 0].expand(batch, keys)  # (B, Tk)
        return torch.stack([self.intervention(weights[:, head], real, step).to(weights.dtype)
                            for head in range(heads)], 1)
