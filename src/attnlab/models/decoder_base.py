"""What every translation decoder shares: its state, its output, and the step/sequence contract.

A decoder offers two ways to run, which must agree (tests check it):
    forward(tgt_in (B, T), encoded, tgt_mask) -> DecoderOutput   teacher forcing, for training
    all_positions(tgt_in (B, T), encoded) -> DecoderOutput       the same at every position
    start(encoded) -> DecoderState; step(tokens (B,), state) -> (logits (B, V), weights, state)
The step form is what greedy and beam search use; `DecoderState.reorder` follows the beams.
Weights are dense (B, [T,] S) for global and hard attention and WindowWeights (start (B, [T]),
weights (B, [T,] 2D + 1)) for local attention; `attnlab.attention.as_dense` reads either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from attnlab.attention import AttentionOutput, Weights

from .attention_layer import Memory
from .rnn import State


@dataclass
class DecoderState:
    """rnn: what each hypothesis carries, a tuple of tensors with the batch on axis 1: the
    decoder RNN's state, each (layers, B, H), or a Transformer's self-attention keys and values
    so far (attnlab.models.transformer); feed: (B, F) what the next step receives besides the
    embedding (Luong's h~_{t-1}, the fixed context of `none`), or None; memory: the source side
    (shared by the beams of a sentence); step: the target position t."""

    rnn: State
    feed: Tensor | None
    memory: Memory | None
    step: int = 0

    def reorder(self, index: Tensor, *, memory: bool = False) -> DecoderState:
        """Follow the beams: index (B',) picks the hypotheses to keep. The memory is per sentence
        (the beams of a sentence share it) and is reordered only with `memory=True`, when the
        set of sentences changes (see attnlab.decode.SearchState)."""
        rnn = tuple(part.index_select(1, index) for part in self.rnn)
        feed = None if self.feed is None else self.feed.index_select(0, index)
        kept = self.memory.select(index) if memory and self.memory is not None else self.memory
        return replace(self, rnn=rnn, feed=feed, memory=kept)


@dataclass
class DecoderOutput:
    """logits: (N, V) at the N real target positions from `forward`, (B, T, V) from
    `all_positions`; attention (B, T, S), or WindowWeights for local attention (as_dense reads
    both), or None (no-attention decoder); hard_log_prob / hard_entropy (B, T): hard
    attention's log p(s~_t) and H[alpha_t], else None; heads (B, L, H, T, S): a Transformer's
    cross-attention of every layer and head (`attention` is then the last layer's mean over
    heads), else None."""

    logits: Tensor
    attention: Weights | None = None
    hard_log_prob: Tensor | None = None
    hard_entropy: Tensor | None = None
    heads: Tensor | None = None

    @classmethod
    def of(cls, logits: Tensor, attention: AttentionOutput | None) -> DecoderOutput:
        """The logits with what the attention of every step gave (B, T, ...), if any."""
        if attention is None:
            return cls(logits)
        sample = attention.sample
        return cls(logits, attention.weights, None if sample is None else sample.log_prob,
                   None if sample is None else sample.entropy)


class OutputLayer(nn.Module):
    """features (..., F) -> logits (..., V), optionally sharing the target embedding matrix."""

    def __init__(self, feature_dim: int, vocab_size: int, embedding: nn.Embedding | None):
        super().__init__()
        self.tied = embedding
        self.proj = None if embedding is not None else nn.Linear(feature_dim, vocab_size)
        self.bias = nn.Parameter(torch.zeros(vocab_size)) if embedding is not None else None

    def forward(self, features: Tensor) -> Tensor:
        if self.proj is not None:
            logits: Tensor = self.proj(features)
            return logits
        assert self.tied is not None and self.bias is not None  # set together (__init__)
        return features @ self.tied.weight.t() + self.bias

