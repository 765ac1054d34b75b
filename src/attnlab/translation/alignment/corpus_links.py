"""Word links of a whole parallel corpus from eflomal (aligner.py), written once by `attnlab
align`: the target of guided alignment (translation/guided.py).

    FILE        one Pharaoh line per sentence pair, 0-based "source-target" word links
    FILE.json   what it was made from: each side's path and sha256, the method, the count,
                and the lines it could not link ("unlinked", 1-based)

eflomal aligns sentences of at most MAX_WORDS words: its C core keeps a sentence in fixed
buffers of 0x400 = 1,024 positions (MAX_SENT_LEN, with 16-bit links), and its Python wrapper
writes a longer sentence as an empty one, whose links line then comes back empty. Raising the
limit means rebuilding eflomal, and cutting a pair in two would link words across a cut made
at a guess; so such a pair is left out of the aligner's input, its line in FILE stays empty,
and `Aligned.unlinked` names it (guided training leaves a pair without links unguided).

A second `attnlab align` of the same files (same content, same method) finds FILE.json and
returns at once; training checks FILE.json against its own data files, so links made for other
text are refused in one sentence. Words are whitespace tokens, lowercased (as aligner_aer).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from attnlab.data import read_lines
from attnlab.errors import DataError
from attnlab.files import atomic_output

from .aligner import METHODS, _import_eflomal, eflomal_links, symmetrise
from .links import Link, links_line, read_links

# The longest sentence (in whitespace words) eflomal aligns; see the module docstring.
MAX_WORDS = 0x400 - 1


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
    """What `align_corpus` did: the links file, its pairs, whether it was already there, and
    the pairs it could not link: (1-based line, source words, target words), in file order."""

    path: Path
    pairs: int
    cached: bool
    unlinked: list[tuple[int, int, int]] = field(default_factory=list)

    def unlinked_summary(self, shown: int = 10) -> str:
        """'2 pairs not linked (eflomal aligns at most 1,023 words a side; ...): line 7 (source
        1,100 words, target 980), line 9 (...)'; empty when every pair was linked."""
        if not self.unlinked:
            return ""
        lines = ", ".join(f"line {line:,} (source {source:,} words, target {target:,})"
                          for line, source, target in self.unlinked[:shown])
        more = len(self.unlinked) - shown
        rest = f" and {more:,} more (all in {sidecar(self.path).name})" if more > 0 else ""
        count = len(self.unlinked)
        return (f"{count:,} pair{'s' if count != 1 else ''} not linked (eflomal aligns at most "
                f"{MAX_WORDS:,} words a side; their lines in {self.path} are empty): "
                f"{lines}{rest}")


def align_corpus(source: str | os.PathLike, target: str | os.PathLike,
                 output: str | os.PathLike, *, method: str = "grow-diag-final-and") -> Aligned:
    """Align the corpus (source and target files, plain or .gz, line k with line k) with
    eflomal in both directions, symmetrised by `method`, into `output` (and output.json); a
    links file already made from the same contents with the same method is kept as it is.
    A pair with more than MAX_WORDS words on a side is not aligned: its line is empty and
    `unlinked` names it. DataError when no pair can be aligned (nothing is written then)."""
    if method not in METHODS:
        raise DataError(f"unknown symmetrisation method {method!r}; options: {sorted(METHODS)}")
    source, target, output = Path(source), Path(target), Path(output)
    made_for = _made_for(source, target, method)
    recorded = _recorded(output)
    unlinked = _recorded_unlinked(recorded)
    if (recorded is not None and unlinked is not None and output.is_file()
            and _same(recorded, made_for)):
        return Aligned(output, int(recorded.get("pairs", 0)), True, unlinked)
    _import_eflomal()  # missing: one sentence, before the corpus is read
    sources, targets = read_lines(source), read_lines(target)
    if len(sources) != len(targets):
        raise DataError(f"{source} has {len(sources)} lines but {target} has {len(targets)}: "
                        f"they must be parallel")
    if not sources:
        raise DataError(f"{source} and {target} are empty: no sentence pairs to align")
    sizes = [(len(s.split()), len(t.split())) for s, t in zip(sources, targets, strict=True)]
    kept = [index for index, size in enumerate(sizes) if max(size) <= MAX_WORDS]
    unlinked = [(index + 1, *size) for index, size in enumerate(sizes) if max(size) > MAX_WORDS]
    if not kept:
        raise DataError(f"no pair of {source} and {target} can be aligned: each has more "
                        f"than {MAX_WORDS:,} words on a side, the most eflomal aligns")
    forward, reverse = eflomal_links([sources[i].lower() for i in kept],
                                     [targets[i].lower() for i in kept])
    links: list[set[Link]] = [set() for _ in sources]
    for index, one, other in zip(kept, forward, reverse, strict=True):
        links[index] = symmetrise(one, other, method)
    with atomic_output(output) as file:
        for pair in links:
            file.write(links_line(pair) + "\n")
    with atomic_output(sidecar(output)) as file:
        json.dump({**made_for, "pairs": len(sources), "max_words": MAX_WORDS,
                   "unlinked": unlinked}, file, indent=2)
        file.write("\n")
    return Aligned(output, len(sources), False, unlinked)


def _recorded(links: Path) -> dict | None:
    try:
        recorded = json.loads(sidecar(links).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


def _recorded_unlinked(recorded: dict | None) -> list[tuple[int, int, int]] | None:
    """The unlinked pairs FILE.json records; None when it has no such record (a file made
    before it was kept is made again)."""
    try:
        return [(int(line), int(source), int(target))
                for line, source, target in (recorded or {})["unlinked"]]
    except (KeyError, TypeError, ValueError):
        return None


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
