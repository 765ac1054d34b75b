"""The translation experiment config: `data`, `model`, `train`, `loss` and `decode` sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from attnlab.config import at_least, fraction, positive
from attnlab.models.config import ModelConfig
from attnlab.train.config import ExperimentConfig


@dataclass
class DataConfig:
    """Where the parallel text is and how it becomes batches.

    Files are `{dir}/{split}.{lang}` (plain or `.gz`): Multi30k's `train.de.gz`, or the dates
    task's `train.src` with src_lang=src, tgt_lang=tgt. Relative `dir` is taken from the current
    directory.
    """

    dir: str = "data/multi30k"
    train: str = "train"
    valid: str = "val"
    test: str = "test_2016_flickr"
    src_lang: str = "de"
    tgt_lang: str = "en"
    vocab: Literal["bpe", "unigram", "word", "char"] = "bpe"
    # sentencepiece pieces, or the most frequent words (word level)
    vocab_size: int = field(default=8000, metadata=positive())
    joint_vocab: bool = True  # one vocabulary for both sides (needed for shared embeddings)
    # pieces per side; longer training pairs are filtered, counted, reported
    max_len: int = field(default=100, metadata=positive())
    batch_size: int = field(default=64, metadata=positive())
    batch_unit: Literal["sentences", "tokens"] = "sentences"
    # validate on the first N validation pairs (None = all)
    valid_sentences: int | None = field(default=None, metadata=positive())
    seed: int = 1  # batch order


@dataclass
class LossConfig:
    label_smoothing: float = field(default=0.1, metadata=fraction())


@dataclass
class DecodeConfig:
    """Search settings; validation during training always decodes greedily."""

    beam: int = field(default=5, metadata=positive())
    # GNMT length penalty ((5 + |y|) / 6) ** alpha
    alpha: float = field(default=1.0, metadata=at_least(0))
    # output at most ratio * source length + max_len_extra pieces
    max_len_ratio: float = field(default=1.5, metadata=at_least(0))
    max_len_extra: int = field(default=5, metadata=at_least(0))
    batch_size: int = field(default=64, metadata=positive())


@dataclass
class RunConfig(ExperimentConfig):
    """A translation experiment: the YAML sections data, model, train, loss and decode."""

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
