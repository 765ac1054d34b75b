"""Weight matrices in a grid (an explanation's attention and each attribution of one output),
each drawn as the alignment heatmap is (attnlab.viz.heatmap: columns along the top, rows down
the side) in the explorer's one colour scale (ColorBrewer Blues, white 0 to dark blue 1) with
one colour bar under them all; a signed matrix as the magnitude of each row over its row's
largest, so every panel reads "how much of this row's evidence is here"."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from attnlab.viz.heatmap import matrix_figure

GAP = 24  # pixels between panels
COLOURS = "Blues"  # the explorer's scale (serve/static/colour.js): readable in grey too
PER_ROW = 2  # panels side by side: four views read on a page as two rows of two


def row_scaled(values: np.ndarray) -> np.ndarray:
    """The magnitude of `values`, each row divided by its largest (a row of zeros stays 0)."""
    magnitude = np.abs(np.asarray(values, dtype=float))
    peak = magnitude.max(axis=1, keepdims=True) if magnitude.size else magnitude
    return np.divide(magnitude, peak, out=np.zeros_like(magnitude), where=peak > 0)


def panel(values: np.ndarray, title: str, rows: Sequence[str], columns: Sequence[str], *,
          weights: bool, axis_names: tuple[str, str], scale: float = 1.0) -> np.ndarray:
    """One matrix (R, C) as RGB pixels (H, W, 3): drawn as it is when it holds `weights` (0 to
    1), else row-scaled; `scale` times the heatmap's resolution."""
    shown = values if weights else row_scaled(values)
    figure = matrix_figure(shown, rows, columns, title=title if weights else
                           f"{title} (|row| / max)", colorbar=False, axis_names=axis_names,
                           cmap=COLOURS)
    return pixels(figure, scale)


def pixels(figure: Figure, scale: float = 1.0) -> np.ndarray:
    """RGB pixels (H, W, 3) uint8 of `figure` at `scale` times its resolution, cropped as its
    PNG file would be (heatmap.figure_to_array at scale 1)."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=figure.dpi * scale, bbox_inches="tight",
                   pad_inches=0.1)
    buffer.seek(0)
    with Image.open(buffer) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()


def colour_bar(width: int, scale: float = 1.0) -> np.ndarray:
    """The one colour scale's legend, `width` pixels wide: RGB pixels (H, W, 3)."""
    import matplotlib as mpl

    inches = max(width / 100 / scale, 2.0)
    figure = Figure(figsize=(inches, 0.55), dpi=100)
    axes = figure.add_axes((0.05, 0.55, 0.9, 0.3))
    figure.colorbar(mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, 1), cmap=COLOURS),
                    cax=axes, orientation="horizontal")
    axes.set_xlabel("attention weight; an attribution: |value| / its row's largest",
                    fontsize=9)
    return pixels(figure, scale)


def panel_grid(matrices: Mapping[str, np.ndarray], rows: Sequence[str],
               columns: Sequence[str], *, weights: Sequence[str] = (),
               axis_names: tuple[str, str] = ("source pieces", "output pieces"),
               scale: float = 1.0) -> np.ndarray:
    """{title: (R, C) matrix} as panels in rows of PER_ROW on white, the colour bar under
    them: RGB pixels (H, W, 3). The titles in `weights` are drawn as they are, the others
    row-scaled."""
    panels = [panel(values, title, rows, columns, weights=title in weights,
                    axis_names=axis_names, scale=scale) for title, values in matrices.items()]
    lines = [panels[k:k + PER_ROW] for k in range(0, len(panels), PER_ROW)]
    width = max(sum(p.shape[1] for p in line) + GAP * (len(line) - 1) for line in lines)
    bar = colour_bar(width, scale)
    heights = [max(p.shape[0] for p in line) for line in lines]
    canvas = np.full((sum(heights) + GAP * len(lines) + bar.shape[0], max(width, bar.shape[1]),
                      3), 255, dtype=np.uint8)
    top = 0
    for line, height in zip(lines, heights, strict=True):
        left = 0
        for drawn in line:
            canvas[top:top + drawn.shape[0], left:left + drawn.shape[1]] = drawn
            left += drawn.shape[1] + GAP
        top += height + GAP
    canvas[top:top + bar.shape[0], :bar.shape[1]] = bar
    return canvas
