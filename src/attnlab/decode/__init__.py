"""Decoding: greedy and beam search over a trained Seq2Seq, translation of plain sentences with
their attention at piece and word level, and forced alignment of given references."""

from .beam import beam_search
from .common import Hypothesis, length_penalty
from .forced import ForcedAlignment, forced_alignment
from .greedy import greedy_search
from .labels import LabelledAttention
from .translate import TranslationResult, iter_translate, translate

__all__ = [
    "ForcedAlignment", "Hypothesis", "LabelledAttention", "TranslationResult", "beam_search",
    "forced_alignment", "greedy_search", "iter_translate", "length_penalty", "translate",
]
