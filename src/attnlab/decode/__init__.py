"""Search over any model that implements the `Searchable` protocol (start / step / reorder):
greedy and batched beam search, the GNMT length penalty, and what they return."""

from .beam import beam_search
from .common import evaluating, length_penalty, log_probs, next_token_scores
from .greedy import greedy_search
from .protocol import Hypothesis, MaxLen, Searchable, SearchState

__all__ = ["Hypothesis", "MaxLen", "SearchState", "Searchable", "beam_search", "evaluating",
           "greedy_search", "length_penalty", "log_probs", "next_token_scores"]
