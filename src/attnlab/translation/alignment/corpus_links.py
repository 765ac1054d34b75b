"""Word links of a whole parallel corpus from eflomal (aligner.py), written once by `attnlab
align`: the target of guided alignment (translation/guided.py).

    FILE        one Pharaoh line per sentence pair, 0-based "source-target" word links
    FILE.json   what it was made from: each side's path and sha256, the method, the count

A second `attnlab align` of the same files (same content, same method) finds FILE.json and
returns at once; training checks FILE.json against its own data files, so links made for other
text are refused in one sentence. Words are whitespace tokens, lowercased (as aligner_aer).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from attnlab.data import read_lines
from attnlab.errors import DataError
from attnlab.files import atomic_output

from .aligner import METHODS, _import_eflomal, eflomal_links, symmetrise
from .links import Link, links_line, read_links


def file_digest(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes (a .gz file as stored)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise DataError(f"file not found: {path}") from None
    except OSError as error:
        raise DataError(f"cannot read {path}: {error}") from None
    return digest.hexdigest()


def _made_for(source: Path, target: Path, method: str) -> dict:
    return {"aligner": "eflomal", "method": method, "lowercased": True,
            "source": {"path": str(source), "sha256": file_digest(source)},
            "target": {"path": str(target), "sha256": file_digest(target)}}


def sidecar(links: str | os.PathLike) -> Path:
    return Path(f"{links}.json")


@dataclass
class Aligned:
    """What `align_corpus` did: the links file, its pairs, and whether it was already there."""

    path: Path
    pairs: int
    cached: bool


def align_corpus(source: str | os.PathLike, target: str | os.PathLike,
                 output: str | os.PathLike, *, method: str = "grow-diag-final-and") -> Aligned:
    """Align the corpus (source and target files, plain or .gz, line k with line k) with
    eflomal in both directions, symmetrised by `method`, into `output` (and output.json); a
    links file already made from the same contents with the same method is kept as it is."""
    if method not in METHODS:
        raise DataError(f"unknown symmetrisation method {method!r}; options: {sorted(METHODS)}")
    source, target, output = Path(source), Path(target), Path(output)
    made_for = _made_for(source, target, method)
    recorded = _recorded(output)
    if recorded is not None and output.is_file() and _same(recorded, made_for):
        return Aligned(output, int(recorded.get("pairs", 0)), True)
    _import_eflomal()  # missing: one sentence, before the corpus is read
    sources, targets = read_lines(source), read_lines(target)
    if len(sources) != len(targets):
        raise DataError(f"{source} has {len(sources)} lines but {target} has {len(targets)}: "
                        f"they must be parallel")
    if not sources:
        raise DataError(f"{source} and {target} are empty: no sentence pairs to align")
    forward, reverse = eflomal_links([line.lower() for line in sources],
                                     [line.lower() for line in targets])
    with atomic_output(output) as file:
        for one, other in zip(forward, reverse, strict=True):
            file.write(links_line(symmetrise(one, other, method)) + "\n")
    with atomic_output(sidecar(output)) as file:
        json.dump({**made_for, "pairs": len(sources)}, file, indent=2)
        file.write("\n")
    return Aligned(output, len(sources), False)


def _recorded(links: Path) -> dict | None:
    try:
        recorded = json.loads(sidecar(links).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def _same(recorded: dict, made_for: dict) -> bool:
    """The same method on files of the same content (wherever they are now)."""
    return (recorded.get("method") == made_for["method"]
            and all(isinstance(recorded.get(side), dict)
                    and recorded[side].get("sha256") == made_for[side]["sha256"]
                    for side in ("source", "target")))


def read_corpus_links(links: str | os.PathLike, source: str | os.PathLike,
                      target: str | os.PathLike, pairs: int) -> list[frozenset[Link]]:
    """The links of each of `pairs` sentence pairs of source/target; DataError (one sentence)
    when the file is missing, has another number of lines, or its FILE.json says it was made
    from other text."""
    path = Path(links)
    if not path.is_file():
        raise DataError(f"links file not found: {path} (write it with attnlab align --src "
                        f"{source} --tgt {target} --output {path})")
    recorded = _recorded(path)
    if recorded is not None:
        for side, file in (("source", source), ("target", target)):
            entry = recorded.get(side)
            if isinstance(entry, dict) and entry.get("sha256") != file_digest(file):
                raise DataError(f"{path} was made from another {side} text than {file} (its "
                                f"{sidecar(path).name} says so); write it again with attnlab "
                                f"align --src {source} --tgt {target} --output {path}")
    found = [alignment.sure | alignment.possible for alignment in read_links(path)]
    if len(found) != pairs:
        raise DataError(f"{path} has {len(found)} lines of links but the training data has "
                        f"{pairs} sentence pairs; they must be parallel")
    return found
