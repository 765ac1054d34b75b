"""The Transformer's layers (Vaswani et al. 2017, sec. 3.1-3.3), pre-norm: every sublayer reads
LayerNorm(x) and adds its dropped-out output to x, x + Dropout(Sublayer(LN(x))) (Wang et al.
2019; Xiong et al. 2020: it trains without a long warm-up), and a last LayerNorm closes each
stack.

    EncoderLayer: self-attention over the real source positions, then the feed-forward net
    DecoderLayer: causal self-attention (its keys and values cached, one step longer per call),
                  cross-attention over the encoder's output, then the feed-forward net
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .multihead import KeyValues, MultiHeadAttention


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (Vaswani et al. 2017, eq. 2)."""

    def __init__(self, model_dim: int, ff_dim: int):
        super().__init__()
        self.inner = nn.Linear(model_dim, ff_dim)  # W_1, b_1
        self.outer = nn.Linear(ff_dim, model_dim)  # W_2, b_2

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.outer(torch.relu(self.inner(x)))
        return out


class EncoderLayer(nn.Module):
    """x + Dropout(SelfAttention(LN(x))), then x + Dropout(FFN(LN(x)))."""

    def __init__(self, model_dim: int, heads: int, ff_dim: int, dropout: float):
        super().__init__()
        self.self_norm = nn.LayerNorm(model_dim)
        self.self_attention = MultiHeadAttention(model_dim, heads)
        self.ff_norm = nn.LayerNorm(model_dim)
        self.feed_forward = FeedForward(model_dim, ff_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """x (B, S, D), mask (B, S) -> x (B, S, D), self-attention weights (B, H, S, S)."""
        normed = self.self_norm(x)
        attended, weights = self.self_attention(normed, self.self_attention.project(normed),
                                                mask.unsqueeze(1))
        x = x + self.dropout(attended)
        return x + self.dropout(self.feed_forward(self.ff_norm(x))), weights


def causal_mask(first: int, queries: int, keys: int, device: torch.device) -> Tensor:
    """(1, Tq, Tk) bool: the query at target position first + i reads keys 0..first + i."""
    query_position = torch.arange(first, first + queries, device=device).unsqueeze(1)
    return (torch.arange(keys, device=device).unsqueeze(0) <= query_position).unsqueeze(0)


class DecoderLayer(nn.Module):
    """x + Dropout(CausalSelfAttention(LN(x))), x + Dropout(CrossAttention(LN(x), encoder)),
    then x + Dropout(FFN(LN(x)))."""

    def __init__(self, model_dim: int, heads: int, ff_dim: int, dropout: float, key_dim: int):
        super().__init__()
        self.self_norm = nn.LayerNorm(model_dim)
        self.self_attention = MultiHeadAttention(model_dim, heads)
        self.cross_norm = nn.LayerNorm(model_dim)
        self.cross_attention = MultiHeadAttention(model_dim, heads, key_dim)
        self.ff_norm = nn.LayerNorm(model_dim)
        self.feed_forward = FeedForward(model_dim, ff_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, cache: KeyValues, memory: KeyValues, source_mask: Tensor,
                first: int) -> tuple[Tensor, KeyValues, Tensor, Tensor]:
        """x (B, T, D) at target positions first..first+T-1; cache (B, H, first, d_k) the
        self-attention keys and values of the positions before; memory (B, H, S, d_k) the
        encoder's, source_mask (B, S). Returns x (B, T, D), the cache (B, H, first + T, d_k),
        the cross-attention's output (B, T, D) and weights (B, H, T, S)."""
        normed = self.self_norm(x)
        cache = cache.extend(self.self_attention.project(normed))
        causal = causal_mask(first, x.shape[1], cache.keys.shape[2], x.device)
        attended, _ = self.self_attention(normed, cache, causal)
        x = x + self.dropout(attended)
        crossed, weights = self.cross_attention(self.cross_norm(x), memory,
                                                source_mask.unsqueeze(1), first)
        x = x + self.dropout(crossed)
        return x + self.dropout(self.feed_forward(self.ff_norm(x))), cache, crossed, weights
