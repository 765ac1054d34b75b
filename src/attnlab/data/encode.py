"""Encoding parallel text: in memory for a small corpus, or into a PairStore by worker
processes for a large one. Both keep and encode the same pairs, through `encode_pairs`.

    kept, encoded, report = encode_pairs(pairs, src_vocab, tgt_vocab, max_len=100)
    report = encode_to_store(folder, src_path, tgt_path, VocabFiles(...), max_len=100)

The store's encoder reads both files in chunks of CHUNK_LINES line pairs and hands them to
worker processes, each of which loads the vocabularies once; the chunks' results are appended
in order, so the store is the same for any number of workers.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import numpy as np

from attnlab.errors import DataError

from .corpus import FilterReport, decode_line, filter_pairs
from .store import PairStoreWriter, token_dtype
from .vocab import SentencePieceVocab, TokenVocab, Vocab, load_vocab

CHUNK_LINES = 50_000
_MAX_REPORTED_LINES = 5   # as FilterReport keeps


def encode_pairs(pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                 max_len: int | None) -> tuple[list[int], list[tuple[list[int], list[int]]],
                                               FilterReport]:
    """Drop pairs with an empty side or a side longer than max_len pieces (a side's length is
    its pieces under the source vocabulary, or the larger count under either when the two
    vocabularies are not one object), then encode the rest; each text is encoded once per
    vocabulary. Returns the kept pairs' indices, their ids and the FilterReport."""
    joint = src_vocab is tgt_vocab
    source_ids = _Encodings(src_vocab)
    target_ids = source_ids if joint else _Encodings(tgt_vocab)

    def pieces(text: str) -> int:
        count = len(source_ids(text))
        return count if joint else max(count, len(target_ids(text)))

    _, kept, report = filter_pairs(pairs, max_len=max_len, length_fn=pieces)
    encoded = [(source_ids(pairs[i][0]), target_ids(pairs[i][1])) for i in kept]
    return kept, encoded, report


class _Encodings:
    """A vocabulary's encode, remembering each text's ids (the filter and the encoding ask
    for the same texts)."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.seen: dict[str, list[int]] = {}

    def __call__(self, text: str) -> list[int]:
        ids = self.seen.get(text)
        if ids is None:
            ids = self.seen[text] = self.vocab.encode(text)
        return ids


def vocab_fingerprint(vocab: Vocab) -> str:
    """What a vocabulary maps, hashed (its kind and its sentencepiece model or pieces): the
    store of a corpus is keyed by it."""
    if isinstance(vocab, SentencePieceVocab):
        data = vocab.processor.serialized_model_proto()
    elif isinstance(vocab, TokenVocab):
        data = json.dumps(vocab.pieces, ensure_ascii=False).encode()
    else:
        raise TypeError(f"no fingerprint for a {type(vocab).__name__}")
    return hashlib.sha256(vocab.kind.encode() + b"\0" + data).hexdigest()


@dataclass(frozen=True)
class VocabFiles:
    """Where worker processes load the vocabularies from: `folder/{names[i]}.*` (Vocab.save's
    files); joint: one vocabulary for both sides, loaded once."""

    folder: str
    names: tuple[str, str]
    joint: bool

    def load(self) -> tuple[Vocab, Vocab]:
        source = load_vocab(self.folder, self.names[0])
        return source, source if self.joint else load_vocab(self.folder, self.names[1])


@dataclass
class Chunk:
    """Raw lines start+1 .. start+n of both files (1-based, as messages count them)."""

    start: int
    src: list[bytes]
    tgt: list[bytes]


@dataclass
class EncodedChunk:
    lines: np.ndarray                                   # (n,) int64, 0-based input lines
    sides: dict[str, tuple[np.ndarray, np.ndarray]]     # side -> (tokens (t,), lengths (n,))
    report: FilterReport                                # its line numbers are the files'


def encode_chunk(chunk: Chunk, vocabs: tuple[Vocab, Vocab], paths: tuple[str, str],
                 max_len: int | None) -> EncodedChunk:
    """Decode (strict UTF-8, errors naming file and line), filter and encode one chunk."""
    numbers = range(chunk.start + 1, chunk.start + 1 + len(chunk.src))
    sources = [decode_line(raw, paths[0], n) for raw, n in zip(chunk.src, numbers, strict=True)]
    targets = [decode_line(raw, paths[1], n) for raw, n in zip(chunk.tgt, numbers, strict=True)]
    kept, encoded, report = encode_pairs(list(zip(sources, targets, strict=True)), *vocabs,
                                         max_len)
    report.dropped_lines = [(line + chunk.start, why) for line, why in report.dropped_lines]
    sides = {}
    for side, column in (("src", 0), ("tgt", 1)):
        ids = [pair[column] for pair in encoded]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        tokens = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64,
                             count=int(lengths.sum()))
        sides[side] = (tokens, lengths)
    return EncodedChunk(np.asarray(kept, dtype=np.int64) + chunk.start, sides, report)


def merge_report(total: FilterReport, part: FilterReport) -> None:
    """Add a later chunk's counts (and its first dropped lines, while room is left)."""
    total.total += part.total
    total.kept += part.kept
    total.empty += part.empty
    total.too_long += part.too_long
    room = _MAX_REPORTED_LINES - len(total.dropped_lines)
    total.dropped_lines.extend(part.dropped_lines[:max(room, 0)])


def encode_to_store(folder: Path, src_path: Path, tgt_path: Path, vocab_files: VocabFiles,
                    max_len: int | None, *, workers: int = 1, inputs: dict | None = None,
                    chunk_lines: int = CHUNK_LINES) -> FilterReport:
    """Encode two line-aligned files into a PairStore in `folder` (empty; its manifest is
    written last) with `workers` processes (1: in this one); returns the FilterReport.
    inputs: what to record in the manifest as the store's origin."""
    vocabs = vocab_files.load()
    writer = PairStoreWriter(folder, {"src": token_dtype(len(vocabs[0])),
                                      "tgt": token_dtype(len(vocabs[1]))})
    paths = (str(src_path), str(tgt_path))
    report = FilterReport(max_len=max_len)
    jobs = ((chunk, paths, max_len) for chunk in read_chunks(src_path, tgt_path, chunk_lines))
    if workers <= 1:
        results: Iterator[EncodedChunk] = (encode_chunk(chunk, vocabs, p, n)
                                           for chunk, p, n in jobs)
    else:
        results = _in_workers(jobs, vocab_files, workers)
    for encoded in results:
        writer.add(encoded.lines, encoded.sides)
        merge_report(report, encoded.report)
    writer.finish(report, inputs or {})
    return report


def default_workers() -> int:
    """The processes an encode uses: this process's CPUs, at most 16."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return max(1, min(16, available or os.cpu_count() or 1))


def worker_context() -> multiprocessing.context.BaseContext:
    """Worker processes forked on Linux, as torch's DataLoader makes them (they start at once,
    run only numpy and sentencepiece, and never import the caller's script again, which a
    spawned worker does and which would wait forever on the cache's lock when the script
    lacks an `if __name__ == "__main__":` guard); spawned elsewhere (macOS, Windows), where
    forking is unsafe."""
    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


_WORKER: dict[str, tuple[Vocab, Vocab]] = {}   # a worker process's vocabularies


def _start_worker(vocab_files: VocabFiles) -> None:
    _WORKER["vocabs"] = vocab_files.load()


def _encode_in_worker(chunk: Chunk, paths: tuple[str, str], max_len: int | None) -> EncodedChunk:
    return encode_chunk(chunk, _WORKER["vocabs"], paths, max_len)


def _in_workers(jobs, vocab_files: VocabFiles, workers: int) -> Iterator[EncodedChunk]:
    """The jobs' results in order, at most 2 * workers chunks in flight (bounded memory)."""
    pool = ProcessPoolExecutor(workers, mp_context=worker_context(),
                               initializer=_start_worker, initargs=(vocab_files,))
    try:
        pending: deque[Future[EncodedChunk]] = deque()
        for job in jobs:
            pending.append(pool.submit(_encode_in_worker, *job))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def read_chunks(src_path: Path, tgt_path: Path, size: int) -> Iterator[Chunk]:
    """Both files' raw lines (split on b"\\n" only, as read_lines splits), `size` pairs at a
    time; DataError when the files' line counts differ or a file cannot be read."""
    with _open(src_path) as sources, _open(tgt_path) as targets:
        start = 0
        while True:
            src = _read(sources, src_path, size)
            tgt = _read(targets, tgt_path, size)
            if len(src) != len(tgt):
                src_total = start + len(src) + _count(sources, src_path)
                tgt_total = start + len(tgt) + _count(targets, tgt_path)
                raise DataError(f"{src_path} has {src_total} lines but {tgt_path} has "
                                f"{tgt_total}: parallel files must have the same number of "
                                f"lines")
            if not src:
                return
            yield Chunk(start, src, tgt)
            start += len(src)


def _open(path: Path) -> IO[bytes]:
    try:
        if path.name.endswith(".gz"):
            return cast(IO[bytes], gzip.open(path, "rb"))
        return open(path, "rb")
    except OSError as error:
        raise DataError(f"{path}: cannot read file ({error})") from None


def _read(stream: IO[bytes], path: Path, size: int) -> list[bytes]:
    try:
        return list(itertools.islice(stream, size))
    except (EOFError, OSError) as error:  # gzip.BadGzipFile is an OSError; EOFError = truncated
        raise DataError(f"{path}: cannot read file ({error})") from None


def _count(stream: IO[bytes], path: Path) -> int:
    try:
        return sum(1 for _ in stream)
    except (EOFError, OSError) as error:
        raise DataError(f"{path}: cannot read file ({error})") from None
