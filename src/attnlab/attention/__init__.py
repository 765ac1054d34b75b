"""The attention family: one interface for every mechanism (SPEC.md).

    from attnlab.attention import Attention, LocalAttention, HardAttention, SCORES

Every mechanism is called as `mechanism(query, keys, values=None, mask=None) -> (context, weights)`
with query (B, Tq, Dq) or one step (B, Dq), keys (B, Tk, Dk), values (B, Tk, Dv), mask (B, Tk)
bool (True = real), context (B, Tq, Dv) and weights (B, Tq, Tk).
"""

from .core import attend, masked_softmax
from .global_attention import Attention
from .hard import (
    HardAttention,
    HardAttentionOutput,
    HardSample,
    MovingAverageBaseline,
    ReinforceTerms,
    reinforce_loss,
)
from .local import LocalAttention, WindowedAttention
from .scores import SCORES, Score, ScoreDims, build_score
from .self_attention import CausalSelfAttention, causal_mask

__all__ = [
    "SCORES",
    "Attention",
    "CausalSelfAttention",
    "HardAttention",
    "HardAttentionOutput",
    "HardSample",
    "LocalAttention",
    "MovingAverageBaseline",
    "ReinforceTerms",
    "Score",
    "ScoreDims",
    "WindowedAttention",
    "attend",
    "build_score",
    "causal_mask",
    "masked_softmax",
    "reinforce_loss",
]
