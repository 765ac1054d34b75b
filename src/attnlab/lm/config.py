"""The language-model experiment config: `data`, `model` and `train` sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnlab.models.config import LanguageModelConfig
from attnlab.train.config import ExperimentConfig


@dataclass
class TextConfig:
    """Monolingual text, one sentence a line (plain or `.gz`).

    File names are taken relative to `dir` (an absolute name ignores it); a relative `dir` is
    taken from the current directory. Sentences are predicted as <s> w_1 .. w_n -> w_1 .. </s>.
    """

    dir: str = "data/multi30k"
    train: str = "train.en.gz"
    valid: str = "val.en.gz"
    test: str | None = "test_2016_flickr.en.gz"
    vocab: Literal["bpe", "unigram", "word", "char"] = "bpe"
    vocab_size: int | None = 4000  # sentencepiece pieces, or the most frequent words/chars
    max_len: int = 100  # pieces; longer training sentences are dropped and counted
    batch_size: int = 64
    batch_unit: Literal["sentences", "tokens"] = "sentences"
    valid_sentences: int | None = None  # validate on the first N validation sentences
    seed: int = 1  # batch order

    def path(self, name: str) -> Path:
        return Path(self.dir) / name


@dataclass
class LMRunConfig(ExperimentConfig):
    """A language-model experiment: the YAML sections data, model and train."""

    data: TextConfig = field(default_factory=TextConfig)
    model: LanguageModelConfig = field(default_factory=LanguageModelConfig)
