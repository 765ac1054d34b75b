"""One call shape for every attention mechanism inside a decoder.

A decoder asks `layer(query, memory, step)` and gets an `AttentionOutput` back, whether the
mechanism is global, local-m/local-p or hard; the memory carries the keys projected once per
source sentence. `layer.compact(...)` is the same with local attention's weights as
WindowWeights: the translation decoders call it, so a long source never costs (B, T, S).

`layer.intervention`, when set (attnlab.explain.intervening, for the faithfulness tests), is
given each call's dense weights, the source mask and the first target step, and returns the
weights the decoder reads instead: the context is recomputed from them, so an output can be
asked what it owes to its attention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnlab.attention import AttentionOutput, Mechanism, as_dense

# (dense weights (B, Tq, S), source mask (B, S), first target step) -> the weights to read
# instead, (B, Tq, S)
Intervention = Callable[[Tensor, Tensor, int], Tensor]


@dataclass
class Memory:
    """What a decoder attends to, fixed for a source sentence (beams share it).

    keys (B, S, Dk) the annotations; projected (B, S, H) their key-side projection (a
    Transformer's: every layer's cross-attention keys and values, (B, L, 2, H, S, d_k)); mask
    (B, S). Every field has the batch first.
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
        self.intervention: Intervention | None = None

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
        out = self.mechanism.attend_compact(query, memory.keys, mask=memory.mask,
                                            projected_keys=memory.projected, first_step=step)
        return out if self.intervention is None else self._intervened(out, memory, step)

    def _intervened(self, out: AttentionOutput, memory: Memory, step: int) -> AttentionOutput:
        """`out` with the intervention's weights and their context: the expectation over the
        keys (global, local and hard attention in expectation mode), or the most weighted key
        (hard attention in argmax mode)."""
        assert self.intervention is not None  # compact calls this only when one is set
        one_step = out.context.dim() == 2  # a (B, Dq) query: the Tq axis is absent
        dense = as_dense(out.weights, memory.keys.shape[1])
        dense = dense.unsqueeze(1) if one_step else dense  # (B, Tq, S)
        weights = self.intervention(dense, memory.mask, step)
        if self.mechanism.eval_mode == "argmax":
            read = torch.nn.functional.one_hot(weights.argmax(-1), weights.shape[-1])
            context = read.to(memory.keys.dtype) @ memory.keys
        else:
            context = weights @ memory.keys  # (B, Tq, Dk)
        if one_step:
            weights, context = weights.squeeze(1), context.squeeze(1)
        return AttentionOutput(context, weights, out.sample)
