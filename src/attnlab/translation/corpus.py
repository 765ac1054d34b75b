"""A run's parallel data: find the split files, build or reload the vocabularies, encode."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from attnlab.data import FilterReport, Vocab, build_vocab, filter_pairs, load_vocab, read_parallel
from attnlab.errors import DataError

from .config import DataConfig

VOCAB_NAMES = ("src_vocab", "tgt_vocab")
# Every file a run's vocabularies may leave in its directory (word/char: .json only).
VOCAB_FILES = tuple(f"{name}.{ext}" for name in VOCAB_NAMES for ext in ("json", "model", "vocab"))


def split_path(config: DataConfig, split: str, lang: str) -> Path:
    """`{dir}/{split}.{lang}`, or the same with `.gz`; DataError naming both when neither exists."""
    plain = Path(config.dir) / f"{split}.{lang}"
    for candidate in (plain, plain.with_name(plain.name + ".gz")):
        if candidate.is_file():
            return candidate
    raise DataError(f"data file not found: {plain} (or {plain.name}.gz); set data.dir or "
                    f"fetch the data (attnlab data multi30k / attnlab data dates)")


def read_split(config: DataConfig, split: str) -> list[tuple[str, str]]:
    return read_parallel(*split_paths(config, split))


def split_paths(config: DataConfig, split: str) -> tuple[Path, Path]:
    """The source and target files of `split`."""
    return (split_path(config, split, config.src_lang), split_path(config, split, config.tgt_lang))


def read_training_pairs(config: DataConfig) -> list[tuple[str, str]]:
    """The training split's pairs; DataError naming both files when no pair has text on both
    sides (no vocabulary could be built from them)."""
    pairs = read_split(config, config.train)
    if not any(source.strip() and target.strip() for source, target in pairs):
        _no_data(config, config.train, "training", len(pairs), "")
    return pairs


def check_encoded(corpus: EncodedCorpus, config: DataConfig, split: str,
                  kind: str) -> EncodedCorpus:
    """`corpus` (the `kind` data: training, validation) when it kept a pair; else DataError
    naming the files and why nothing was kept (the filter's counts)."""
    if not corpus.pairs:
        report = corpus.report
        advice = f"{report.summary()}; raise data.max_len" if report.too_long else ""
        _no_data(config, split, kind, report.total, advice)
    return corpus


def _no_data(config: DataConfig, split: str, kind: str, lines: int, why: str) -> NoReturn:
    source, target = split_paths(config, split)
    limited = kind == "validation" and lines == config.valid_sentences   # cut by the limit
    if not why:
        why = (f"none of their {'first ' if limited else ''}{lines} line pairs has text on "
               f"both sides" if lines else "both files are empty")
    raise DataError(f"no {kind} data in {source} and {target}: {why}")


@dataclass
class Vocabularies:
    src: Vocab
    tgt: Vocab

    def save(self, directory: Path) -> None:
        self.src.save(directory, VOCAB_NAMES[0])
        self.tgt.save(directory, VOCAB_NAMES[1])

    @classmethod
    def load(cls, directory: Path) -> Vocabularies:
        return cls(load_vocab(directory, VOCAB_NAMES[0]), load_vocab(directory, VOCAB_NAMES[1]))

    @staticmethod
    def exist_in(directory: Path) -> bool:
        return all((directory / f"{name}.json").is_file() for name in VOCAB_NAMES)


def build_vocabularies(config: DataConfig, pairs: list[tuple[str, str]]) -> Vocabularies:
    """Train the source and target vocabularies on the training pairs, in memory (joint: one
    vocabulary trained on both sides, saved under both names by `Vocabularies.save`)."""
    sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
    if config.joint_vocab:
        joint = build_vocab(config.vocab, sources + targets, size=config.vocab_size,
                            name=VOCAB_NAMES[0])
        return Vocabularies(joint, joint)
    return Vocabularies(*(build_vocab(config.vocab, texts, size=config.vocab_size, name=name)
                          for texts, name in zip((sources, targets), VOCAB_NAMES, strict=True)))


@dataclass
class EncodedCorpus:
    """Token ids of the kept pairs (no BOS/EOS), their original line indices, and the report."""

    pairs: list[tuple[list[int], list[int]]]
    lines: list[int]
    report: FilterReport


def encode_corpus(pairs: list[tuple[str, str]], vocabs: Vocabularies,
                  max_len: int | None) -> EncodedCorpus:
    """Filter empty pairs and pairs with a side longer than max_len pieces (counted in the
    report), then encode the rest."""

    def pieces(text: str) -> int:
        count = len(vocabs.src.encode(text))
        return count if vocabs.src is vocabs.tgt else max(count, len(vocabs.tgt.encode(text)))

    _, kept, report = filter_pairs(pairs, max_len=max_len, length_fn=pieces)
    encoded = [(vocabs.src.encode(pairs[i][0]), vocabs.tgt.encode(pairs[i][1])) for i in kept]
    return EncodedCorpus(encoded, kept, report)
