"""Global soft attention: every key is scored (Bahdanau et al. 2015; Luong et al. 2015, 3.1)."""

from __future__ import annotations

from torch import Tensor, nn

from .core import as_query_sequence, attend, check_keys_values, key_mask_for_scores
from .scores import ScoreDims, build_score


class Attention(nn.Module):
    """Score, then masked softmax, then weighted sum.

    Attention(score, query_dim=, key_dim=, hidden_dim=, max_len=, sharpness=) with `score` a key of
    SCORES. forward(query, keys, values=None, mask=None) -> (context, weights):
    query (B, Tq, Dq) or one step (B, Dq); keys (B, Tk, Dk); values (B, Tk, Dv), default the keys;
    mask (B, Tk) (or (B, Tq, Tk)) bool, True = real position.
    Returns context (B, Tq, Dv) and weights (B, Tq, Tk); for one step (B, Dv) and (B, Tk).

    For step-by-step decoding compute `projected = attention.project_keys(keys)` once per source
    sentence and pass `projected_keys=projected` at every step.
    """

    def __init__(
        self,
        score: str,
        *,
        query_dim: int,
        key_dim: int,
        hidden_dim: int | None = None,
        max_len: int | None = None,
        sharpness: float | None = None,
    ):
        super().__init__()
        dims = ScoreDims(query_dim, key_dim, hidden_dim, max_len, sharpness)
        self.score = build_score(score, dims)

    @property
    def who(self) -> str:
        return f"Attention({self.score.name!r})"

    def project_keys(self, keys: Tensor) -> Tensor:
        """The key-side work, done once per source sentence: (B, Tk, Dk) -> (B, Tk, H)."""
        self.score.check_dims(None, keys)
        return self.score.project_keys(keys)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        query, is_step = as_query_sequence(query, self.who)  # (B, Tq, Dq)
        values = keys if values is None else values
        check_keys_values(keys, values, query.shape[0], self.who)
        self.score.check_dims(query, keys)
        key_mask = key_mask_for_scores(mask, keys, query.shape[1], self.who)
        if projected_keys is None:
            projected_keys = self.score.project_keys(keys)  # (B, Tk, H)
        scores = self.score(query, projected_keys)  # (B, Tq, Tk)
        context, weights = attend(scores, values, key_mask)  # (B, Tq, Dv), (B, Tq, Tk)
        if is_step:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights
