"""Evaluation on plain strings and arrays: BLEU/chrF, BLEU by length, alignment and AER.

Nothing here runs a model: decoding produces the strings and attention arrays scored here.
"""

from attnlab.eval.alignment import (
    AlignmentSet,
    aer,
    aer_counts,
    aer_from_counts,
    alignment_from_attention,
    merge_subwords,
    read_links,
    word_ids_from_pieces,
)
from attnlab.eval.bleu import Scores, corpus_bleu, corpus_chrf, corpus_scores
from attnlab.eval.buckets import DEFAULT_EDGES, BucketRow, bleu_by_length, format_buckets

__all__ = [
    "DEFAULT_EDGES",
    "AlignmentSet",
    "BucketRow",
    "Scores",
    "aer",
    "aer_counts",
    "aer_from_counts",
    "alignment_from_attention",
    "bleu_by_length",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_scores",
    "format_buckets",
    "merge_subwords",
    "read_links",
    "word_ids_from_pieces",
]
