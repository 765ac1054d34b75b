"""A pre-encoded parallel corpus on disk, read through memory maps (as fairseq's mmap datasets
and Megatron's indexed datasets are): flat token arrays plus offsets, one folder per corpus.

    store = PairStore(folder)                 # opens; reads no token
    store.lengths()                           # (N, 2) int64, ids per side
    store.batch([4, 17, 9])                   # a Batch, from those three pairs' slices only

A folder holds, for N kept pairs:
  src.tokens  (T_src,) uint16 or uint32      src.offsets  (N + 1,) int64, pair i is
  tgt.tokens  (T_tgt,) uint16 or uint32      tgt.offsets  (N + 1,) int64  tokens[o[i]:o[i+1]]
  lines       (N,) int64, each pair's 0-based line in the input files
  lengths     (N, 2) int32, each pair's number of source and target ids (what the sampler
              reads: it never touches the offsets or tokens)
  manifest.json  the format, the counts and dtypes, each file's SHA-256, the filter's report,
                 and what the store was made from
The manifest is written last; `cache.cached_folder` renames a finished folder into place. A
store is used only when every file has the size and the SHA-256 its manifest gives (a file of
the right size with other bytes would index past the vocabulary or the token arrays); the
digests are remembered with each file's identity (`cache.file_digest`), so an unchanged store
is hashed once, not at every opening.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.errors import DataError

from .batching import Batch, collate_flat
from .cache import file_digest
from .corpus import FilterReport

FORMAT = 2   # 2: the manifest holds each file's SHA-256
MANIFEST = "manifest.json"
SIDES = ("src", "tgt")


def token_dtype(vocab_size: int) -> np.dtype:
    """The narrowest unsigned type that holds every id of a vocabulary of this size."""
    return np.dtype(np.uint16 if vocab_size <= 2**16 else np.uint32)


def _expected_sizes(manifest: dict) -> dict[str, int]:
    """File name -> size in bytes, as the manifest describes the store."""
    pairs = int(manifest["pairs"])
    sizes = {"lines": 8 * pairs, "lengths": 8 * pairs}
    for side in SIDES:
        info = manifest[side]
        sizes[f"{side}.tokens"] = np.dtype(info["dtype"]).itemsize * int(info["tokens"])
        sizes[f"{side}.offsets"] = 8 * (pairs + 1)
    return sizes


def store_problem(folder: Path) -> tuple[dict | None, str | None]:
    """(the manifest, None) for a complete, undamaged store of this format in `folder`, else
    (None, what is wrong with it): missing or damaged manifest (a killed build), another
    format, a file whose size or SHA-256 is not the manifest's."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            return None, f"its {MANIFEST} is not of store format {FORMAT}"
        sizes = _expected_sizes(manifest)
        for name, size in sizes.items():
            found = (folder / name).stat().st_size
            if found != size:
                return None, f"{name} has {found:,} bytes where {MANIFEST} says {size:,}"
        digests = manifest["sha256"]
        for name in sizes:
            if file_digest(folder / name) != digests[name]:
                return None, f"{name} does not match the SHA-256 in {MANIFEST}"
    except FileNotFoundError as error:
        return None, f"{Path(error.filename or MANIFEST).name} is missing"
    except (OSError, ValueError, KeyError, TypeError) as error:
        return None, f"it cannot be read ({type(error).__name__})"
    return manifest, None


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a complete, undamaged store of this format in `folder`, or None (see
    store_problem)."""
    return store_problem(folder)[0]


def is_complete(folder: Path) -> bool:
    return read_manifest(folder) is not None


def _map(path: Path, dtype: np.dtype | type, count: int) -> np.ndarray:
    """The file as a read-only (count,) array; an empty file (which mmap refuses) as zeros."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(count,))


class PairStore:
    """A complete store folder, memory-mapped: pages are read when a batch touches them, so
    a process holds only what it reads (under DDP, its own share of the batches).

    report: the length filter's FilterReport; inputs: what the store was made from.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        manifest, problem = store_problem(self.folder)
        if manifest is None:
            raise DataError(f"{self.folder} is not a complete corpus store ({problem}); "
                            f"delete it and it will be encoded again")
        self.manifest = manifest
        pairs = int(manifest["pairs"])
        self.arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {
            side: (_map(self.folder / f"{side}.tokens", np.dtype(manifest[side]["dtype"]),
                        int(manifest[side]["tokens"])),
                   _map(self.folder / f"{side}.offsets", np.int64, pairs + 1))
            for side in SIDES}
        self.lines = _map(self.folder / "lines", np.int64, pairs)
        self._lengths = _map(self.folder / "lengths", np.int32, 2 * pairs).reshape(pairs, 2)
        self.report = FilterReport(**{**manifest["report"], "dropped_lines": [
            (int(line), str(reason)) for line, reason in manifest["report"]["dropped_lines"]]})
        self.inputs: dict[str, Any] = manifest.get("inputs", {})

    def __len__(self) -> int:
        return len(self.lines)

    def lengths(self) -> np.ndarray:
        """(N, 2) int32, read-only: each pair's number of source and target ids (no BOS/EOS)."""
        return self._lengths

    def pair(self, index: int) -> tuple[list[int], list[int]]:
        """Pair `index`'s ids, as lists (for looking, not for training loops)."""
        def ids(side: str) -> list[int]:
            tokens, offsets = self.arrays[side]
            return tokens[offsets[index]:offsets[index + 1]].tolist()

        return ids("src"), ids("tgt")

    def batch(self, indices: Sequence[int], **collate_options) -> Batch:
        """The padded Batch of these pairs (what `collate` makes of them), read from the maps."""
        return collate_flat(self.arrays["src"], self.arrays["tgt"], indices, **collate_options)


class PairStoreWriter:
    """Appends encoded chunks to a folder's files, in order; `finish` writes the manifest.

    dtypes: per side, the token type (token_dtype of its vocabulary's size).
    """

    FILES = ("lines", "lengths",
             *(f"{side}.{part}" for side in SIDES for part in ("tokens", "offsets")))

    def __init__(self, folder: Path, dtypes: dict[str, np.dtype]):
        self.folder, self.dtypes = folder, dtypes
        self.pairs = 0
        self.tokens = dict.fromkeys(SIDES, 0)
        for name in self.FILES:
            (folder / name).write_bytes(b"")
        for side in SIDES:
            self._append(f"{side}.offsets", np.zeros(1, np.int64))

    def _append(self, name: str, array: np.ndarray) -> None:
        with open(self.folder / name, "ab") as file:
            file.write(array.tobytes())

    def add(self, lines: np.ndarray, sides: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Append pairs: lines (n,) their input lines; sides: per side (tokens (t,), lengths
        (n,)), the pairs' ids one after the other and how many each has."""
        self._append("lines", np.asarray(lines, dtype=np.int64))
        self._append("lengths", np.stack([sides[side][1] for side in SIDES], axis=1)
                     .astype(np.int32))
        for side in SIDES:
            tokens, lengths = sides[side]
            dtype = self.dtypes[side]
            if len(tokens) and int(tokens.max()) > np.iinfo(dtype).max:
                raise ValueError(f"{side} id {int(tokens.max())} does not fit in {dtype}")
            self._append(f"{side}.tokens", np.asarray(tokens, dtype=dtype))
            self._append(f"{side}.offsets",
                         self.tokens[side] + np.cumsum(lengths, dtype=np.int64))
            self.tokens[side] += int(np.sum(lengths, dtype=np.int64))
        self.pairs += len(lines)

    def finish(self, report: FilterReport, inputs: dict) -> None:
        """Write the manifest, the last file of a complete store."""
        manifest = {"format": FORMAT, "pairs": self.pairs, "report": asdict(report),
                    "inputs": inputs, "sha256": {name: _sha256(self.folder / name)
                                                 for name in self.FILES},
                    **{side: {"dtype": self.dtypes[side].name, "tokens": self.tokens[side]}
                       for side in SIDES}}
        (self.folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n",
                                            encoding="utf-8")


def _sha256(path: Path) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()
