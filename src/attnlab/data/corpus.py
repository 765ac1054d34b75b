"""Reading parallel corpora: plain or gzipped text, aligned file pairs or one TSV file.

Every reader is strict: a bad byte, a missing file or a misaligned pair is a DataError whose one
sentence names the file and the line, never a decode traceback from deep inside a training run.
Line numbers in messages are 1-based, as editors and `sed -n` count them.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.errors import DataError

Pair = tuple[str, str]

# How many dropped line numbers a FilterReport keeps for its message; enough to go and look.
_MAX_REPORTED_LINES = 5


def read_lines(path: str | os.PathLike) -> list[str]:
    """Read a text file (gzipped if the name ends in `.gz`) as a list of lines.

    Strips only the line ending (`\\n`, or `\\r\\n` from Windows files) and a UTF-8 byte-order
    mark on the first line; other whitespace is kept because it is the data.
    Raises DataError for a missing file, a damaged gzip stream or invalid UTF-8.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file not found: {path}")
    opener = gzip.open if path.name.endswith(".gz") else open
    lines = []
    try:
        with opener(path, "rb") as stream:
            # Binary iteration splits on b"\n" only, so a stray \r or \x85 inside a sentence
            # does not silently break one line into two and misalign a parallel corpus.
            for number, raw in enumerate(stream, start=1):
                lines.append(decode_line(raw, path, number))
    except (EOFError, OSError) as error:  # gzip.BadGzipFile is an OSError; EOFError = truncated
        raise DataError(f"{path}: cannot read file ({error})") from None
    return lines


def decode_line(raw: bytes, path: Path | str, number: int) -> str:
    """One raw line (without caring for its newline) as text; invalid UTF-8 is a DataError
    naming the file (or stream) and line."""
    raw = raw.removesuffix(b"\n").removesuffix(b"\r")
    if number == 1:
        raw = raw.removeprefix(b"\xef\xbb\xbf")  # BOM written by some Windows editors
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # Report a character column: what an editor shows when the user opens the line.
        column = len(raw[: error.start].decode("utf-8", errors="replace")) + 1
        byte = raw[error.start]
        raise DataError(
            f"{path} line {number}: invalid UTF-8 (byte 0x{byte:02x} at column {column})"
        ) from None


def read_parallel(src_path: str | os.PathLike, tgt_path: str | os.PathLike) -> list[Pair]:
    """Read two line-aligned files (line i of one translates line i of the other) as pairs."""
    sources, targets = read_lines(src_path), read_lines(tgt_path)
    if len(sources) != len(targets):
        raise DataError(
            f"{src_path} has {len(sources)} lines but {tgt_path} has {len(targets)}: "
            "parallel files must have the same number of lines"
        )
    return list(zip(sources, targets, strict=True))


def read_tsv(path: str | os.PathLike) -> list[Pair]:
    """Read one file of `source<TAB>target` lines as pairs; every line needs exactly one tab."""
    pairs = []
    for number, line in enumerate(read_lines(path), start=1):
        tabs = line.count("\t")
        if tabs != 1:
            raise DataError(
                f"{path} line {number}: expected one tab between source and target, "
                f"found {tabs}"
            )
        source, target = line.split("\t")
        pairs.append((source, target))
    return pairs


@dataclass
class FilterReport:
    """What `filter_pairs` kept and why it dropped the rest (counts add up to `total`)."""

    total: int = 0
    kept: int = 0
    empty: int = 0     # either side empty or only whitespace
    too_long: int = 0  # either side longer than max_len
    max_len: int | None = None
    # (1-based line, reason) of the first few dropped pairs, so the user can go and look.
    dropped_lines: list[tuple[int, str]] = field(default_factory=list)

    def summary(self) -> str:
        """One line, e.g. 'kept 28990 of 29000 pairs (7 empty, 3 longer than 100 tokens; ...)'."""
        text = f"kept {self.kept} of {self.total} pairs"
        reasons = []
        if self.empty:
            reasons.append(f"{self.empty} empty")
        if self.too_long:
            reasons.append(f"{self.too_long} longer than {self.max_len} tokens")
        if not reasons:
            return text
        lines = ", ".join(str(number) for number, _ in self.dropped_lines)
        more = ", ..." if self.total - self.kept > len(self.dropped_lines) else ""
        return f"{text} ({', '.join(reasons)}; first at lines {lines}{more})"


def count_words(text: str) -> int:
    """Default length: whitespace-separated words."""
    return len(text.split())


def filter_pairs(
    pairs: Sequence[Pair],
    *,
    max_len: int | None = None,
    length_fn: Callable[[str], int] = count_words,
) -> tuple[list[Pair], list[int], FilterReport]:
    """Drop pairs with an empty side or a side longer than `max_len` (None = no length limit).

    Length is `length_fn(text)` per side, e.g. `lambda t: len(vocab.encode(t))` to count the
    subword tokens the model will see. Returns the kept pairs, their 0-based indices in `pairs`
    (to keep other per-pair data aligned) and a FilterReport whose line numbers are 1-based
    positions in `pairs`, which are file lines for `read_parallel` and `read_tsv`.
    """
    report = FilterReport(total=len(pairs), max_len=max_len)
    kept, kept_indices = [], []
    for index, (source, target) in enumerate(pairs):
        if not source.strip() or not target.strip():
            reason = "empty"
            report.empty += 1
        elif max_len is not None and max(length_fn(source), length_fn(target)) > max_len:
            reason = "too long"
            report.too_long += 1
        else:
            kept.append((source, target))
            kept_indices.append(index)
            continue
        if len(report.dropped_lines) < _MAX_REPORTED_LINES:
            report.dropped_lines.append((index + 1, reason))
    report.kept = len(kept)
    return kept, kept_indices, report
