"""The attention family: one interface for every mechanism (docs/equations.md).

    from attnlab.attention import Attention, LocalAttention, HardAttention, SCORES

Every mechanism takes a built `Score` (or, for convenience, a SCORES name and its sizes) and is
called as `mechanism(query, keys, values=None, mask=None) -> (context, weights)` with query
(B, Tq, Dq) or one step (B, Dq), keys (B, Tk, Dk), values (B, Tk, Dv), mask (B, Tk) bool
(True = real), context (B, Tq, Dv) and weights (B, Tq, Tk); `mechanism.attend(...)` returns
an `AttentionOutput` with hard attention's draw as well, and `mechanism.attend_compact(...)` the
same with local attention's weights as `WindowWeights` (windows, no (B, Tq, Tk) tensor);
`as_dense(weights, source_len)` turns either form into dense weights.
"""

from .base import AttentionOutput, HardSample, Mechanism
from .core import attend, masked_softmax
from .global_attention import Attention
from .hard import (
    HardAttention,
    MovingAverageBaseline,
    ReinforceTerms,
    ReinforceWeights,
    reinforce_loss,
    sequence_reinforce_loss,
)
from .local import LocalAttention, WindowedAttention
from .mechanisms import MECHANISMS, MechanismOptions, build_mechanism, mechanism_class
from .scores import SCORES, Score, ScoreDims, build_score, max_positions, score_class
from .self_attention import CausalSelfAttention, causal_mask
from .window_weights import Weights, WindowWeights, as_dense, join_weights, map_weights

__all__ = [
    "MECHANISMS",
    "SCORES",
    "Attention",
    "AttentionOutput",
    "CausalSelfAttention",
    "HardAttention",
    "HardSample",
    "LocalAttention",
    "Mechanism",
    "MechanismOptions",
    "MovingAverageBaseline",
    "ReinforceTerms",
    "ReinforceWeights",
    "Score",
    "ScoreDims",
    "Weights",
    "WindowWeights",
    "WindowedAttention",
    "as_dense",
    "attend",
    "build_mechanism",
    "build_score",
    "causal_mask",
    "join_weights",
    "map_weights",
    "masked_softmax",
    "max_positions",
    "mechanism_class",
    "reinforce_loss",
    "score_class",
    "sequence_reinforce_loss",
]
