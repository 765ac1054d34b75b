"""One call shape for every attention mechanism inside a decoder.

A decoder asks `layer(query, memory, step)` and gets an `AttentionStep` back, whether the
mechanism is global, local-m/local-p or hard; the memory carries the keys projected once per
source sentence.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from attnlab.attention import Attention, HardAttention, HardSample, LocalAttention
from attnlab.errors import ConfigError

from .config import AttentionConfig


@dataclass
class Memory:
    """What a decoder attends to, fixed for a source sentence (beams share it).

    keys (B, S, Dk) the annotations; projected (B, S, H) their key-side projection; mask (B, S).
    """

    keys: Tensor
    projected: Tensor
    mask: Tensor

    def select(self, index: Tensor) -> Memory:
        """Keep/repeat sentences: index (B',) into the batch."""
        return Memory(self.keys.index_select(0, index), self.projected.index_select(0, index),
                      self.mask.index_select(0, index))


@dataclass
class AttentionStep:
    """context (B, Tq, Dk); weights (B, Tq, S); sample: the hard-attention draw, or None."""

    context: Tensor
    weights: Tensor
    sample: HardSample | None = None


class AttentionLayer(nn.Module):
    """Wraps Attention / LocalAttention / HardAttention behind one decoder-facing call."""

    def __init__(self, config: AttentionConfig, query_dim: int, key_dim: int, max_len: int):
        super().__init__()
        self.config = config
        options = dict(query_dim=query_dim, key_dim=key_dim, hidden_dim=config.hidden_dim,
                       max_len=config.max_len or max_len, sharpness=config.sharpness)
        try:
            if config.hard:
                if config.window is not None:
                    raise ValueError("hard attention is global: set window to null")
                self.mechanism = HardAttention(
                    config.score, expectation_prob=config.expectation_prob, **options)
            elif config.window is not None:
                self.mechanism = LocalAttention(config.score, window=config.window,
                                                predictive=config.predictive, **options)
            else:
                self.mechanism = Attention(config.score, **options)
        except ValueError as error:
            raise ConfigError(f"model.decoder.attention: {error}") from None

    def memory(self, keys: Tensor, mask: Tensor) -> Memory:
        """Project the keys once per source sentence: keys (B, S, Dk), mask (B, S)."""
        return Memory(keys, self.mechanism.project_keys(keys), mask)

    def forward(self, query: Tensor, memory: Memory, step: int = 0) -> AttentionStep:
        """query (B, Tq, Dq) for target steps step..step+Tq-1 -> AttentionStep."""
        kwargs = dict(projected_keys=memory.projected)
        if isinstance(self.mechanism, HardAttention):
            out = self.mechanism.sample(query, memory.keys, mask=memory.mask, **kwargs)
            return AttentionStep(out.context, out.weights, out.sample)
        if isinstance(self.mechanism, LocalAttention):
            kwargs["offset"] = step  # local-m: p_t = t
        context, weights = self.mechanism(query, memory.keys, mask=memory.mask, **kwargs)
        return AttentionStep(context, weights)
