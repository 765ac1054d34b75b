"""Evaluation on plain strings: BLEU/chrF and BLEU by source length.

Nothing here runs a model: decoding produces the strings scored here. (Alignment and AER are
translation's: attnlab.translation.alignment.)
"""

from attnlab.eval.bleu import Scores, corpus_bleu, corpus_chrf, corpus_scores
from attnlab.eval.buckets import DEFAULT_EDGES, BucketRow, bleu_by_length, format_buckets

__all__ = [
    "DEFAULT_EDGES",
    "BucketRow",
    "Scores",
    "bleu_by_length",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_scores",
    "format_buckets",
]
