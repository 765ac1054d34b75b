"""Global soft attention: every key is scored (Bahdanau et al. 2015; Luong et al. 2015, 3.1)."""

from __future__ import annotations

from torch import Tensor

from .base import AttentionOutput, Mechanism, Position, resolve_score
from .core import attend
from .scores import Score


class Attention(Mechanism):
    """Score, then masked softmax, then weighted sum.

    Attention(score) with a built Score, or Attention(name, query_dim=, key_dim=, hidden_dim=,
    max_len=, sharpness=) with a key of SCORES. forward(query, keys, values=None, mask=None) ->
    (context, weights): query (B, Tq, Dq) or one step (B, Dq); keys (B, Tk, Dk); values
    (B, Tk, Dv), default the keys; mask (B, Tk) (or (B, Tq, Tk)) bool, True = real position.
    Returns context (B, Tq, Dv) and weights (B, Tq, Tk); for one step (B, Dv) and (B, Tk).

    For step-by-step decoding compute `projected = attention.project_keys(keys)` once per source
    sentence and pass `projected_keys=projected` at every step.
    """

    score: Score

    def __init__(self, score: Score | str, **dims: int | float | None):
        super().__init__()
        self.score = resolve_score(score, dims)

    def attend_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                        key_mask: Tensor | None, projected_keys: Tensor,
                        call: Position) -> AttentionOutput:
        scores = self.score(query, projected_keys)  # (B, Tq, Tk)
        return AttentionOutput(*attend(scores, values, key_mask))  # (B, Tq, Dv), (B, Tq, Tk)
