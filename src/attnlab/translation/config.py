"""The translation experiment config: `data`, `model`, `train`, `loss` and `decode` sections."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from attnlab.config import at_least, between, fraction, positive
from attnlab.decode import Penalty
from attnlab.decode.settings import Overridable
from attnlab.errors import ConfigError
from attnlab.models.config import ModelConfig
from attnlab.train.config import ExperimentConfig


@dataclass
class DataConfig:
    """Where the parallel text is and how it becomes batches.

    Files are `{dir}/{split}.{lang}` (plain or `.gz`): Multi30k's `train.de.gz`, or the dates
    task's `train.src` with src_lang=src, tgt_lang=tgt. Relative `dir` is taken from the current
    directory.

    `store` says how the training pairs are held: memory, encoded into Python lists at every
    start; memmap, encoded once (by worker processes) into a memory-mapped store in the cache
    ($ATTNLAB_CACHE, else ~/.cache/attnlab), keyed by the training files' and vocabularies'
    contents and reused while they are unchanged, a fresh run's vocabularies cached beside
    it; auto, memmap when the two training files together hold at least 32 MiB (about 200k
    pairs), else memory, and memory with train.guided_alignment (its links are held per pair
    in memory anyway). Both give the same batches.
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
    store: Literal["auto", "memory", "memmap"] = "auto"  # how training pairs are held (above)


@dataclass
class LossConfig:
    label_smoothing: float = field(default=0.1, metadata=fraction())


@dataclass
class DecodeConfig(Overridable):
    """Search settings; validation during training always decodes greedily."""

    beam: int = field(default=5, metadata=positive())
    # how finished hypotheses are ranked (attnlab.decode.Penalty): gnmt, log P / ((5 + |y|) / 6)
    # ** alpha; average, log P / |y|; none, log P alone
    length_penalty: Literal["gnmt", "average", "none"] = "gnmt"
    # GNMT length penalty ((5 + |y|) / 6) ** alpha
    alpha: float = field(default=1.0, metadata=between(0, 10))  # attnlab.decode.ALPHA_MAX
    # GNMT coverage penalty beta * sum_i log(min(sum_j a_ji, 1)) (Wu et al. 2016); 0 = off
    beta: float = field(default=0.0, metadata=between(0, 10))  # attnlab.decode.BETA_MAX
    # output at most ratio * source length + max_len_extra pieces
    max_len_ratio: float = field(default=1.5, metadata=at_least(0))
    max_len_extra: int = field(default=5, metadata=at_least(0))
    batch_size: int = field(default=64, metadata=positive())
    # finished hypotheses kept per sentence, best first (at most the beam)
    n_best: int = field(default=1, metadata=positive())

    def __post_init__(self) -> None:
        # The one check of this constraint: every route (YAML, --set, the command line, the
        # explorer, attnlab.load) makes its settings through this class.
        if not 1 <= self.n_best <= self.beam:
            raise ConfigError(f"n_best must be between 1 and the beam size {self.beam}, got "
                              f"{self.n_best}")

    def greedy(self) -> DecodeConfig:
        """These settings with beam 1 (one hypothesis), as validation during training decodes."""
        return replace(self, beam=1, n_best=1)

    def describe(self) -> str:
        """'beam 5', with the penalties when they are not the defaults: 'beam 5, beta 0.2'."""
        parts = [f"beam {self.beam}"]
        if self.length_penalty != "gnmt":
            parts.append(f"length penalty {self.length_penalty}")
        if self.beta:
            parts.append(f"beta {self.beta:g}")
        return ", ".join(parts)

    def penalty(self) -> Penalty:
        """How these settings rank finished hypotheses (length_penalty, alpha, beta)."""
        try:
            return Penalty(self.length_penalty, self.alpha, self.beta)
        except ValueError as error:  # a value given past the config's checks (the API)
            raise ConfigError(str(error)) from None


@dataclass
class RunConfig(ExperimentConfig):
    """A translation experiment: the YAML sections data, model, train, loss and decode."""

    # TranslationTask.validate's figures (exact_match: % of outputs equal to their reference)
    validation_metrics = ("loss", "perplexity", "bleu", "chrf", "exact_match")

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.data.store == "memmap" and self.train.guided_alignment is not None:
            raise ConfigError("train.guided_alignment holds every training pair's links in "
                              "memory, so it reads the pairs from memory too: set data.store "
                              "to auto or memory")
        if self.decode.beta and self.model.decoder.kind == "none":
            raise ConfigError("decode.beta (the coverage penalty) is computed from attention, "
                              "and model.decoder.kind none has none")
