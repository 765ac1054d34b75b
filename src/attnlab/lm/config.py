"""The language-model experiment config: `data`, `model` and `train` sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from attnlab.config import positive
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
    # sentencepiece pieces, or the most frequent words/chars
    vocab_size: int | None = field(default=4000, metadata=positive())
    # pieces; longer training sentences are dropped and counted
    max_len: int = field(default=100, metadata=positive())
    batch_size: int = field(default=64, metadata=positive())
    batch_unit: Literal["sentences", "tokens"] = "sentences"
    # validate on the first N validation sentences
    valid_sentences: int | None = field(default=None, metadata=positive())
    seed: int = 1  # batch order

    def path(self, name: str) -> Path:
        return Path(self.dir) / name


@dataclass
class LMRunConfig(ExperimentConfig):
    """A language-model experiment: the YAML sections data, model and train."""

    task: str = "lm"
    validation_metrics = ("loss", "perplexity")   # LanguageModelTask.validate's figures

    data: TextConfig = field(default_factory=TextConfig)
    model: LanguageModelConfig = field(default_factory=LanguageModelConfig)
