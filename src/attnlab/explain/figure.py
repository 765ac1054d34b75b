"""The explanation figure: attention and each attribution of one translation side by side, each
drawn as the alignment heatmap is (attnlab.viz.heatmap: source along the top, output down the
side, black 0 to white 1), an attribution as the magnitude of each row over its row's largest,
so every panel reads "how much of this row's evidence is here"."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from attnlab.files import atomic_output
from attnlab.viz.heatmap import figure_to_array, matrix_figure

from .methods import LABELS

if TYPE_CHECKING:
    from .explanation import Explanation

GAP = 24  # pixels between panels


def row_scaled(values: np.ndarray) -> np.ndarray:
    """|values| with each row divided by its largest magnitude (a row of zeros stays 0)."""
    magnitude = np.abs(np.asarray(values, dtype=float))
    peak = magnitude.max(axis=1, keepdims=True) if magnitude.size else magnitude
    return np.divide(magnitude, peak, out=np.zeros_like(magnitude), where=peak > 0)


def panel(explanation: Explanation, view: str) -> np.ndarray:
    """One view's heatmap as RGB pixels (H, W, 3)."""
    values = explanation.views[view]
    shown = values if view == "attention" else row_scaled(values)
    title = LABELS[view] if view == "attention" else f"{LABELS[view]} (|row| / max)"
    figure = matrix_figure(shown, explanation.target_pieces, explanation.source_pieces,
                           title=title, colorbar=False,
                           axis_names=("source pieces", "output pieces"))
    return figure_to_array(figure)


def explanation_figure(explanation: Explanation, views: list[str],
                       path: str | os.PathLike) -> None:
    """The panels of `views` in a row, written to `path` (.png), atomically."""
    unknown = [view for view in views if view not in explanation.views]
    if unknown:
        raise ValueError(f"no view {unknown[0]!r}: this explanation has "
                         f"{', '.join(explanation.views)}")
    panels = [panel(explanation, view) for view in views]
    height = max(p.shape[0] for p in panels)
    width = sum(p.shape[1] for p in panels) + GAP * (len(panels) - 1)
    canvas = np.full((height, width, 3), 255, dtype=np.uint8)
    left = 0
    for pixels in panels:
        canvas[: pixels.shape[0], left : left + pixels.shape[1]] = pixels
        left += pixels.shape[1] + GAP
    with atomic_output(path, "wb") as file:
        Image.fromarray(canvas).save(file, format="PNG")
