"""A run's parallel data: find the split files, build or reload the vocabularies, encode
(into Python lists, or once into a memory-mapped store: store.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
import sentencepiece

from attnlab.data import (
    Batch,
    FilterReport,
    Vocab,
    build_vocab,
    collate,
    load_vocab,
    read_parallel,
)
from attnlab.data.cache import cache_dir, cache_key, cached_folder, file_digest
from attnlab.data.encode import (
    VocabFiles,
    default_workers,
    encode_pairs,
    encode_to_store,
    vocab_fingerprint,
    worker_context,
)
from attnlab.data.store import FORMAT as STORE_FORMAT
from attnlab.data.store import PairStore, is_complete
from attnlab.errors import DataError
from attnlab.version import __version__

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


def check_kept(report: FilterReport, config: DataConfig, split: str, kind: str) -> None:
    """DataError naming the files and why nothing was kept (the filter's counts) when the
    `kind` data (training, validation) kept no pair."""
    if not report.kept:
        advice = f"{report.summary()}; raise data.max_len" if report.too_long else ""
        _no_data(config, split, kind, report.total, advice)


def check_encoded(corpus: EncodedCorpus, config: DataConfig, split: str,
                  kind: str) -> EncodedCorpus:
    """`corpus` when it kept a pair; else DataError (check_kept)."""
    check_kept(corpus.report, config, split, kind)
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

    def lengths(self) -> np.ndarray:
        """(N, 2) int64: each pair's number of source and target ids (no BOS/EOS), as
        PairStore.lengths gives them."""
        return np.array([(len(s), len(t)) for s, t in self.pairs], dtype=np.int64).reshape(-1, 2)

    def batch(self, indices: list[int]) -> Batch:
        """The padded Batch of these pairs, as PairStore.batch makes it."""
        return collate([self.pairs[i] for i in indices], indices=indices)


def encode_corpus(pairs: list[tuple[str, str]], vocabs: Vocabularies,
                  max_len: int | None) -> EncodedCorpus:
    """Filter empty pairs and pairs with a side longer than max_len pieces (counted in the
    report), then encode the rest (attnlab.data.encode.encode_pairs, as the store does)."""
    kept, encoded, report = encode_pairs(pairs, vocabs.src, vocabs.tgt, max_len)
    return EncodedCorpus(encoded, kept, report)


# data.store auto: training files of this many bytes or more (about 200k pairs) are stored.
MEMMAP_FROM_BYTES = 32 * 2**20
# A store of smaller files is encoded in this process: starting workers would cost more.
IN_PROCESS_BELOW_BYTES = 8 * 2**20


def uses_store(config: DataConfig, guided: bool) -> bool:
    """Whether the training pairs are read from a memory-mapped store (data.store; auto picks
    the lists with guided alignment, which holds per-pair links in memory anyway)."""
    if config.store != "auto":
        return config.store == "memmap"
    return not guided and _size(split_paths(config, config.train)) >= MEMMAP_FROM_BYTES


def _size(paths: tuple[Path, Path]) -> int:
    return sum(path.stat().st_size for path in paths)


def stored_training_data(config: DataConfig, run_dir: Path | None,
                         log: Callable[[str], None]) -> tuple[Vocabularies, PairStore]:
    """The vocabularies (the run's; for a new run the cache's, trained in a worker process
    when missing) and the training pairs' store (encoded when missing), both keyed by the
    training files' contents; DataError when no pair is kept, as for the lists."""
    paths = split_paths(config, config.train)
    digests = [file_digest(path) for path in paths]
    folder = cached_vocabularies(config, digests, log) if run_dir is None else Path(run_dir)
    vocabs = Vocabularies.load(folder)
    store = cached_store(config, paths, digests, vocabs, folder, log)
    check_kept(store.report, config, config.train, "training")
    return vocabs, store


def cached_vocabularies(config: DataConfig, digests: list[str],
                        log: Callable[[str], None]) -> Path:
    """The cache's folder of the vocabularies these training files and settings give."""
    description = {"kind": "vocabularies", "inputs": digests, "vocab": config.vocab,
                   "size": config.vocab_size, "joint": config.joint_vocab,
                   "attnlab": __version__, "sentencepiece": sentencepiece.__version__}

    def build(folder: Path) -> None:
        log("training the vocabularies in a worker process (once for these files)")
        with ProcessPoolExecutor(1, mp_context=worker_context()) as pool:
            pool.submit(train_vocabularies, config, str(folder)).result()

    start = time.monotonic()
    folder, built = cached_folder(cache_dir("vocabularies"), cache_key(description), build,
                                  Vocabularies.exist_in, log)
    how = f"trained in {time.monotonic() - start:.1f} s" if built else "reused"
    log(f"vocabularies: {folder} ({how})")
    return folder


def train_vocabularies(config: DataConfig, folder: str) -> None:
    """Read the training pairs, train the vocabularies and save them into `folder` (in a
    worker process: the training process never holds the corpus's text)."""
    build_vocabularies(config, read_training_pairs(config)).save(Path(folder))


def cached_store(config: DataConfig, paths: tuple[Path, Path], digests: list[str],
                 vocabs: Vocabularies, vocab_folder: Path,
                 log: Callable[[str], None]) -> PairStore:
    """The cache's store of the training pairs as these vocabularies encode them."""
    fingerprints = [vocab_fingerprint(vocabs.src), vocab_fingerprint(vocabs.tgt)]
    description = {"kind": "pairs", "format": STORE_FORMAT, "inputs": digests,
                   "src_vocab": fingerprints[0], "tgt_vocab": fingerprints[1],
                   "max_len": config.max_len}
    workers = 1 if _size(paths) < IN_PROCESS_BELOW_BYTES else default_workers()
    # One vocabulary for both sides (a joint one): loaded once, each text encoded once.
    files = VocabFiles(str(vocab_folder), VOCAB_NAMES, joint=fingerprints[0] == fingerprints[1])
    inputs = {"files": [str(path) for path in paths], "sha256": digests}

    def build(folder: Path) -> None:
        where = "in this process" if workers == 1 else f"with {workers} worker processes"
        log(f"encoding the training pairs {where} (once for these files and vocabularies)")
        encode_to_store(folder, *paths, files, config.max_len, workers=workers, inputs=inputs)

    start = time.monotonic()
    folder, built = cached_folder(cache_dir("pairs"), cache_key(description), build,
                                  is_complete, log)
    how = f"encoded in {time.monotonic() - start:.1f} s" if built else "reused"
    log(f"training pairs: {folder} ({how})")
    return PairStore(folder)
