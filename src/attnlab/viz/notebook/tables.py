"""Attention as plain text, for a console: a matrix with its row and column tokens, as wide
as a terminal; what does not fit is said, not wrapped."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnlab.viz.heatmap import token_label

WIDTH = 100  # characters a line
ROWS = 40
LABEL = 12


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def matrix_table(rows: list[str], cols: list[str], weights: Any) -> str:
    """Rows of `weights` (len(rows), len(cols)) to 2 decimals under the column tokens; at most
    WIDTH characters a line and ROWS rows, the rest counted. None: no attention."""
    if weights is None:
        return "(no attention)"
    weights = np.asarray(weights, dtype=np.float64)
    row_labels = [_cut(token_label(token), LABEL) for token in rows]
    left = max([len(label) for label in row_labels] + [4])
    cell = max(5, min(LABEL, max([len(token_label(token)) for token in cols] + [1]) + 1))
    fit = max(1, (WIDTH - left) // cell)
    shown = cols[:fit]
    lines = [" " * left + "".join(_cut(token_label(t), cell - 1).rjust(cell) for t in shown)]
    for i, label in enumerate(row_labels[:ROWS]):
        values = weights[i, : len(shown)] if i < weights.shape[0] else []
        lines.append(label.ljust(left) + "".join(f"{v:.2f}".rjust(cell) for v in values))
    notes = []
    if len(cols) > fit:
        notes.append(f"{len(cols) - fit} more columns")
    if len(rows) > ROWS:
        notes.append(f"{len(rows) - ROWS} more rows")
    if notes:
        lines.append(f"({', '.join(notes)}; .weights has them all)")
    return "\n".join(lines)


def links_table(rows: list[str], cols: list[str], views: dict[str, Any]) -> str:
    """Each row token's largest column by every view (by magnitude: an attribution is
    signed), one column a view, at most ROWS rows, the rest counted."""
    names = list(views)
    best = {name: np.abs(np.asarray(values, dtype=np.float64)).argmax(axis=1)
            for name, values in views.items()}
    width = 24
    lines = ["output".ljust(LABEL + 2) + "".join(_cut(n.replace("_", " "), width - 2).ljust(width)
                                               for n in names)]
    for i, token in enumerate(rows[:ROWS]):
        cells = [token_label(cols[int(best[name][i])]) for name in names]
        lines.append(_cut(token_label(token), LABEL).ljust(LABEL + 2)
                     + "".join(_cut(cell, width - 2).ljust(width) for cell in cells))
    if len(rows) > ROWS:
        lines.append(f"({len(rows) - ROWS} more rows; .views has them all)")
    return "\n".join(line.rstrip() for line in lines)
