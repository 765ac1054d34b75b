"""A length-stress version of Multi30k task 1: consecutive sentence pairs joined into long ones.

Multi30k descriptions are short (German train: median 11 words, max 39), too short to show
what Bahdanau et al. 2015 (Fig. 2) show: a model without attention falls apart as sentences
grow. Each example here joins k consecutive pairs of one split, 1 <= k <= max_join, source
with source and reference with reference, by one space, so an example is still an exact
translation. k is drawn uniformly per example; the pairs are consumed in order, so every
original pair is used exactly once (the last group of a split may be shorter than its k).

    make_long_multi30k("data/multi30k", "data/multi30k-long", pair=("de", "en"), seed=1)

writes `{split}.{language}.gz` (the Multi30k names, so a config just points `data.dir` at the new
folder) for every split found in the source folder, and `meta.json`. Every check (inputs present,
readable, aligned; the destination usable) runs before anything is written, and the files are
renamed into place together at the end.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import statistics
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from attnlab.errors import ConfigError, DataError, WriteError
from attnlab.files import check_outputs, writing

from .corpus import Pair, count_words, read_parallel
from .multi30k import SPLITS, check_pair, file_name

# Source lengths (in words) counted in the stats: the region where Bahdanau et al.'s RNNencdec
# has already fallen off.
LONG_WORDS = (20, 40)


def make_long_multi30k(
    source_dir: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    pair: Iterable[str] = ("de", "en"),
    seed: int = 1,
    max_join: int = 4,
) -> dict[str, dict]:
    """Join consecutive pairs of every split of `pair` in `source_dir` into `dest`; return
    {split: stats} (examples, original pairs, joins per k, source-word lengths).

    Raises DataError for a missing, unreadable or misaligned input, ConfigError for a bad
    option, WriteError for a destination that cannot be written; all before writing anything.
    """
    pair = check_pair(pair)
    _check_options(seed, max_join)
    source_dir, dest = Path(source_dir), Path(dest)
    files = find_splits(source_dir, pair)
    corpora = {split: read_parallel(*paths) for split, paths in files.items()}
    _check_dest(dest, source_dir, files, pair)
    examples, stats = {}, {}
    for split, pairs in corpora.items():
        sizes = group_sizes(len(pairs), split_rng(seed, split), max_join)
        examples[split] = join_pairs(pairs, sizes)
        stats[split] = split_stats(pairs, examples[split], sizes)
    meta = {"task": "Multi30k task 1, consecutive pairs joined into long examples "
                    "(length stress, after Bahdanau et al. 2015 Fig. 2)",
            "seed": seed, "max_join": max_join, "pair": "-".join(pair),
            "source": str(source_dir.resolve()),
            "k": "uniform on 1..max_join per example, numpy default_rng([seed, crc32(split)]), "
                 "so each split is independent of the others",
            "numpy_version": np.__version__, "splits": stats}
    _write(dest, pair, examples, meta)
    return stats


def _check_options(seed: int, max_join: int) -> None:
    if isinstance(max_join, bool) or not isinstance(max_join, int) or max_join < 1:
        raise ConfigError(f"--max-join must be a whole number of at least 1, got {max_join!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"--seed must be a whole number of at least 0, got {seed!r}")


def find_splits(source_dir: Path, pair: tuple[str, str]) -> dict[str, tuple[Path, Path]]:
    """{split: (source file, target file)} for every `<split>.<language>[.gz]` of `pair` in
    `source_dir`: Multi30k's splits first, then the others by name."""
    if source_dir.exists() and not source_dir.is_dir():
        raise DataError(f"--from {source_dir} is a file; --from wants the folder that holds the "
                        f"data's files")
    if not source_dir.is_dir():
        raise DataError(f"--from {source_dir}: no such directory")
    found: dict[str, dict[str, Path]] = {}
    for path in source_dir.iterdir():
        split, _, language = path.name.removesuffix(".gz").rpartition(".")
        if not split or path.name.startswith(".") or language not in pair or not path.is_file():
            continue
        other = found.setdefault(split, {}).setdefault(language, path)
        if other != path:
            raise DataError(f"--from {source_dir}: both {other.name} and {path.name} are there; "
                            f"keep one of them")
    if not found:
        raise DataError(f"--from {source_dir}: no {'/'.join(pair)} files named "
                        f"<split>.<language>.gz (such as {file_name('train', pair[0])})")
    for split, files in found.items():
        if len(files) == 1:
            (language, path), = files.items()
            missing = pair[1 - pair.index(language)]
            raise DataError(f"--from {source_dir}: {path.name} is there but not its {missing} "
                            f"side {file_name(split, missing)}")
    order = sorted(found, key=lambda split: (SPLITS.index(split) if split in SPLITS
                                             else len(SPLITS), split))
    return {split: (found[split][pair[0]], found[split][pair[1]]) for split in order}


def split_rng(seed: int, split: str) -> np.random.Generator:
    """The generator of one split's k: seeded by `seed` and the split's name, so adding or
    removing a split changes no other split."""
    return np.random.default_rng([seed, zlib.crc32(split.encode("utf-8"))])


def group_sizes(count: int, rng: np.random.Generator, max_join: int) -> list[int]:
    """k per example, uniform on 1..max_join, until `count` pairs are used; the last k is cut
    to what is left."""
    sizes, used = [], 0
    while used < count:
        size = min(int(rng.integers(1, max_join, endpoint=True)), count - used)
        sizes.append(size)
        used += size
    return sizes


def join_pairs(pairs: list[Pair], sizes: list[int]) -> list[Pair]:
    """Consecutive groups of `sizes` pairs, each side joined by one space."""
    examples, start = [], 0
    for size in sizes:
        group = pairs[start:start + size]
        examples.append((" ".join(s for s, _ in group), " ".join(t for _, t in group)))
        start += size
    return examples


def split_stats(pairs: list[Pair], examples: list[Pair], sizes: list[int]) -> dict:
    """What meta.json says of one split: counts, joins per k and source lengths in words."""
    lengths = [count_words(source) for source, _ in examples]
    words = {"min": min(lengths, default=None),
             "median": float(statistics.median(lengths)) if lengths else None,
             "max": max(lengths, default=None)}
    words.update({f"at_least_{n}": sum(length >= n for length in lengths) for n in LONG_WORDS})
    joins = Counter(sizes)
    return {"examples": len(examples), "pairs": len(pairs),
            "joins": {str(k): joins[k] for k in sorted(joins)}, "source_words": words}


def _check_dest(dest: Path, source_dir: Path, files: dict[str, tuple[Path, Path]],
                pair: tuple[str, str]) -> None:
    """Refuse a destination that is a file (or lies under one) or is the source folder, and an
    output that cannot be written or is one of the inputs (a link to it)."""
    for folder in (dest, *dest.parents):
        if folder.exists() and not folder.is_dir():
            where = "" if folder == dest else f": {folder}"
            raise WriteError(f"--dest {dest}{where} is a file, not a folder")
    if not dest.exists():
        return
    if dest.samefile(source_dir):
        raise WriteError(f"--dest {dest} is the --from folder: writing there would replace the "
                         f"Multi30k files, so choose another folder")
    outputs = [file_name(split, language) for split in files for language in pair]
    for name in [*outputs, "meta.json"]:
        for source in (path for paths in files.values() for path in paths):
            check_outputs({"--from file": str(source)}, {"--dest file": str(dest / name)})


def _write(dest: Path, pair: tuple[str, str], examples: dict[str, list[Pair]],
           meta: dict) -> None:
    """Every file into a hidden folder inside `dest` first, then all renamed into place,
    meta.json last: a full disk leaves the old files and no new one, never a mix (a new
    train.de.gz beside an old train.en.gz would be misaligned)."""
    created = not dest.exists()
    with writing(dest):
        dest.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".multi30k-long.", suffix=".tmp", dir=dest))
    try:
        names = _write_staged(staging, dest, pair, examples, meta)
        with writing(dest):
            for name in names:
                os.replace(staging / name, dest / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):  # not empty: the run succeeded
                dest.rmdir()


def _write_staged(staging: Path, dest: Path, pair: tuple[str, str],
                  examples: dict[str, list[Pair]], meta: dict) -> list[str]:
    """Write the gzip files and meta.json into `staging`; return their names, meta.json last."""
    names = []
    for split, pairs in examples.items():
        for side, language in enumerate(pair):
            names.append(file_name(split, language))
            text = "".join(p[side] + "\n" for p in pairs)
            # mtime=0 and no name in the header: the same inputs give the same bytes.
            data = gzip.compress(text.encode("utf-8"), mtime=0)
            _write_file(staging / names[-1], dest / names[-1], data)
    text = json.dumps(meta, ensure_ascii=False, indent=2) + "\n"
    _write_file(staging / "meta.json", dest / "meta.json", text.encode("utf-8"))
    return [*names, "meta.json"]


def _write_file(path: Path, final: Path, data: bytes) -> None:
    with writing(final), open(path, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())  # a full disk shows here at the latest, before any rename
