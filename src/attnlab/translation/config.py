"""The translation experiment config: `data`, `model`, `train`, `loss` and `decode` sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

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
    vocab_size: int = 8000  # sentencepiece pieces, or the most frequent words (word level)
    joint_vocab: bool = True  # one vocabulary for both sides (needed for shared embeddings)
    max_len: int = 100  # pieces per side; longer training pairs are filtered, counted, reported
    batch_size: int = 64
    batch_unit: Literal["sentences", "tokens"] = "sentences"
    valid_sentences: int | None = None  # validate on the first N validation pairs (None = all)
    seed: int = 1  # batch order


@dataclass
class LossConfig:
    label_smoothing: float = 0.1


@dataclass
class DecodeConfig:
    """Search settings; validation during training always decodes greedily."""

    beam: int = 5
    alpha: float = 1.0  # GNMT length penalty ((5 + |y|) / 6) ** alpha
    max_len_ratio: float = 1.5  # output at most ratio * source length + max_len_extra pieces
    max_len_extra: int = 5
    batch_size: int = 64


@dataclass
class RunConfig(ExperimentConfig):
    """A translation experiment: the YAML sections data, model, train, loss and decode."""

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
