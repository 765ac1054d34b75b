"""One call shape for every attention mechanism inside a decoder.

A decoder asks `layer(query, memory, step)` and gets an `AttentionOutput` back, whether the
mechanism is global, local-m/local-p or hard; the memory carries the keys projected once per
source sentence. `layer.compact(...)` is the same with local attention's weights as
WindowWeights: the translation decoders call it, so a long source never costs (B, T, S).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from attnlab.attention import AttentionOutput, Mechanism


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


class AttentionLayer(nn.Module):
    """Any attnlab.attention mechanism behind one decoder-facing call."""

    def __init__(self, mechanism: Mechanism):
        super().__init__()
        self.mechanism = mechanism

    def memory(self, keys: Tensor, mask: Tensor) -> Memory:
        """Project the keys once per source sentence: keys (B, S, Dk), mask (B, S)."""
        return Memory(keys, self.mechanism.project_keys(keys), mask)

    def forward(self, query: Tensor, memory: Memory, step: int = 0) -> AttentionOutput:
        """query (B, Tq, Dq) (or (B, Dq)) for target steps step..step+Tq-1 -> AttentionOutput
        with dense weights (B, Tq, S)."""
        return self.mechanism.attend(query, memory.keys, mask=memory.mask,
                                     projected_keys=memory.projected, first_step=step)

    def compact(self, query: Tensor, memory: Memory, step: int = 0) -> AttentionOutput:
        """As `forward`, weights in the mechanism's compact form: WindowWeights for local
        attention (start (B, Tq), weights (B, Tq, 2D + 1)), dense (B, Tq, S) otherwise."""
        return self.mechanism.attend_compact(query, memory.keys, mask=memory.mask,
                                             projected_keys=memory.projected, first_step=step)
