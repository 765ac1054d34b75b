"""Data: reading corpora, vocabularies, batching, the memory-mapped pair store (store.py,
encode.py, cache.py); dataset recipes live in their own modules."""

from .batching import (
    BATCH_UNITS,
    Batch,
    BucketBatchSampler,
    TensorBatch,
    collate,
    collate_flat,
    iterate_batches,
)
from .cache import cache_root
from .corpus import FilterReport, count_words, filter_pairs, read_lines, read_parallel, read_tsv
from .dates import DateExample, generate_dates, write_dates
from .multi30k import fetch_multi30k
from .multi30k_long import make_long_multi30k
from .rwth import fetch_rwth_gold
from .store import PairStore
from .vocab import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIAL_PIECES,
    UNK_ID,
    VOCAB_KINDS,
    SentencePieceVocab,
    TokenVocab,
    Vocab,
    build_vocab,
    load_vocab,
)

__all__ = [
    "BATCH_UNITS", "Batch", "BucketBatchSampler", "TensorBatch", "collate", "collate_flat",
    "iterate_batches", "PairStore", "cache_root",
    "FilterReport", "count_words", "filter_pairs", "read_lines", "read_parallel", "read_tsv",
    "BOS_ID", "EOS_ID", "PAD_ID", "SPECIAL_PIECES", "UNK_ID", "VOCAB_KINDS",
    "SentencePieceVocab", "TokenVocab", "Vocab", "build_vocab", "load_vocab",
    "DateExample", "generate_dates", "write_dates", "fetch_multi30k", "make_long_multi30k",
    "fetch_rwth_gold",
]
