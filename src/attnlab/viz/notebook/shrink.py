"""Long inputs drawn smaller in the notebook views: past MAX_SIDE tokens a side (or MAX_CELLS
cells in all), neighbouring tokens are merged into one row or column, as `attnlab plot` merges
cells past its pixels (viz.heatmap.heatmap_scale). A view's HTML, SVG and PNG then grow with
these bounds, not with the input: a 5,000-character sentence draws in seconds, not in
gigabytes. A merged column's weight is the sum of its tokens' and a merged row's the mean of its
rows (as word_attention merges the pieces of a word), so every row stays a distribution; the
view's note says what was merged, and `.weights` keeps every weight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_SIDE = 250  # rows or columns a view draws (22-pixel cells: about 5,500 pixels)
MAX_CELLS = 10_000  # cells a view draws: each is an SVG element, on the page and in V8


def blocks_of(rows: int, cols: int) -> tuple[int, int]:
    """Tokens merged into each drawn row and column of a (rows, cols) matrix: at most
    MAX_SIDE drawn a side and MAX_CELLS in all, the longer side merged first."""
    row_block, col_block = (max(1, math.ceil(count / MAX_SIDE)) for count in (rows, cols))
    while (drawn_rows := math.ceil(rows / row_block)) * (
        drawn_cols := math.ceil(cols / col_block)
    ) > MAX_CELLS:
        if drawn_rows >= drawn_cols:
            row_block += 1
        else:
            col_block += 1
    return row_block, col_block


def _starts(count: int, block: int) -> np.ndarray:
    return np.arange(0, count, block)


def _joined(tokens: Sequence[str], block: int) -> list[str]:
    """Each run of `block` tokens as one label: characters run together, longer tokens with a
    space between (the page cuts a long label with "…")."""
    tokens = [str(t) for t in tokens]
    glue = "" if all(len(t) <= 1 for t in tokens if t != "</s>") else " "
    return [glue.join(tokens[k : k + block]) for k in range(0, len(tokens), block)]


@dataclass(frozen=True)
class Shrunk:
    """A matrix as a view draws it: rows, cols (labels), weights (len(rows), len(cols)) or
    None, and what was merged (None: nothing)."""

    rows: list[str]
    cols: list[str]
    weights: np.ndarray | None
    row_block: int = 1
    col_block: int = 1

    def note(self, rows_name: str, cols_name: str) -> str | None:
        """What was merged, e.g. "the 5,001 characters it read are drawn 21 to a column (their
        weights summed)", or None."""
        parts = []
        if self.col_block > 1:
            parts.append(f"{cols_name} are drawn {self.col_block} to a column "
                         f"(their weights summed)")
        if self.row_block > 1:
            parts.append(f"{rows_name} are drawn {self.row_block} to a row "
                         f"(their weights averaged)")
        return "; ".join(parts) or None


def shrink(rows: Sequence[str], cols: Sequence[str], weights: Any) -> Shrunk:
    """rows, cols: token lists; weights (len(rows), len(cols)) or None. More than MAX_SIDE a
    side or MAX_CELLS in all: blocks of neighbours merged (see the module)."""
    row_block, col_block = blocks_of(len(rows), len(cols))
    if weights is None or (row_block == 1 and col_block == 1):
        return Shrunk(list(rows), list(cols), None if weights is None else np.asarray(weights))
    matrix = np.asarray(weights, dtype=np.float64)  # (R, C)
    if matrix.shape != (len(rows), len(cols)) or matrix.size == 0:
        return Shrunk(list(rows), list(cols), matrix)  # the page says it does not fit
    if col_block > 1:
        matrix = np.add.reduceat(matrix, _starts(len(cols), col_block), axis=1)
    if row_block > 1:
        starts = _starts(len(rows), row_block)
        sizes = np.diff(np.append(starts, len(rows)))  # the last block may be short
        matrix = np.add.reduceat(matrix, starts, axis=0) / sizes[:, None]
    return Shrunk(_joined(rows, row_block), _joined(cols, col_block), matrix, row_block,
                  col_block)
