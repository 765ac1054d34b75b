"""Search over any model that implements the `Searchable` protocol (start / step / reorder):
greedy and batched beam search, the GNMT length and coverage penalties, ensembles of models,
and what they return."""

from .beam import beam_search
from .common import (
    evaluating,
    length_penalty,
    log_probs,
    next_token_scores,
    row_attention,
    step_scores,
)
from .ensemble import Ensemble, EnsembleState, member_attention
from .greedy import greedy_search
from .penalties import LENGTH_PENALTIES, Penalty, coverage_penalty
from .protocol import Hypothesis, MaxLen, Searchable, SearchState

__all__ = ["LENGTH_PENALTIES", "Ensemble", "EnsembleState", "Hypothesis", "MaxLen", "Penalty",
           "SearchState", "Searchable", "beam_search", "coverage_penalty", "evaluating",
           "greedy_search", "length_penalty", "log_probs", "member_attention",
           "next_token_scores", "row_attention", "step_scores"]
