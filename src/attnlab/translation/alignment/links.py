"""Links and their file format: the one reader and the one writer of Pharaoh lines.

A link is (source index, target index), 0-based, everywhere in attnlab. A Pharaoh line holds a
sentence pair's links, "i-j" (sure) or "ipj" (possible), separated by spaces. The RWTH de-en gold
set counts from 1 with German the source, so its ``i-j`` (German i, English j) is read as
(i-1, j-1); the dates task's `{split}.align`, eflomal's output and the links files of `attnlab
align` count from 0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from attnlab.errors import DataError

Link = tuple[int, int]  # (source index, target index), 0-based

# "i-j" is a sure link, "ipj" a possible one (the Pharaoh/TALP convention of the RWTH set).
LINK_PATTERN = re.compile(r"(\d+)([-p])(\d+)")


@dataclass(frozen=True)
class AlignmentSet:
    """Gold links of one sentence pair: sure links S and possible links P.

    Convention (Och & Ney 2003): P includes S, so ``possible`` always holds every sure link
    too; a link written as possible only is in ``possible`` and not in ``sure``.
    """

    sure: frozenset[Link]
    possible: frozenset[Link]

    def __post_init__(self):
        # Normalise so callers may pass plain sets and need not repeat sure links in possible.
        object.__setattr__(self, "sure", frozenset(self.sure))
        object.__setattr__(self, "possible", frozenset(self.possible) | self.sure)


def _parse_line(line: str, one_indexed: bool, where: str) -> AlignmentSet:
    sure: set[Link] = set()
    possible: set[Link] = set()
    for token in line.split():
        match = LINK_PATTERN.fullmatch(token)
        if match is None:
            raise DataError(
                f"{where}: cannot read {token!r} as a link; expected 'i-j' (sure) or 'ipj' "
                "(possible) with whole numbers."
            )
        source, target = int(match.group(1)), int(match.group(3))
        if one_indexed:
            if source == 0 or target == 0:
                raise DataError(f"{where}: link {token!r} has index 0, but the file is 1-indexed.")
            source, target = source - 1, target - 1
        (sure if match.group(2) == "-" else possible).add((source, target))
    return AlignmentSet(sure=frozenset(sure), possible=frozenset(possible))


def read_links(
    path_or_lines: str | os.PathLike | Iterable[str], one_indexed: bool = False
) -> list[AlignmentSet]:
    """Read one AlignmentSet per line of Pharaoh-format links (``i-j`` sure, ``ipj`` possible).

    path_or_lines: a file path, or an iterable of lines (then errors say '<lines>').
    one_indexed: True for files counting words from 1 (RWTH/TALP gold); links are returned 0-based.
    An empty line is a sentence pair with no links. Bad input raises DataError naming file and line.
    """
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = Path(path_or_lines)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise DataError(f"cannot read alignment file {path}: {error}.") from error
        name = str(path)
    else:
        lines, name = list(path_or_lines), "<lines>"
    return [
        _parse_line(line, one_indexed, f"{name} line {number}")
        for number, line in enumerate(lines, start=1)
    ]


def links_line(links: Iterable[Link]) -> str:
    """Links as a Pharaoh line, "i-j" (source i, target j, 0-based), sorted by target."""
    return " ".join(f"{i}-{j}" for i, j in sorted(links, key=lambda link: (link[1], link[0])))
