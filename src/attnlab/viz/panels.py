"""Weight matrices side by side (an explanation's attention and each attribution of one
output), each drawn as the alignment heatmap is (attnlab.viz.heatmap: columns along the top,
rows down the side, black 0 to white 1); a signed matrix as the magnitude of each row over its
row's largest, so every panel reads "how much of this row's evidence is here"."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from attnlab.viz.heatmap import matrix_figure

GAP = 24  # pixels between panels


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
                           f"{title} (|row| / max)", colorbar=False, axis_names=axis_names)
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


def panels_side_by_side(matrices: Mapping[str, np.ndarray], rows: Sequence[str],
                        columns: Sequence[str], *, weights: Sequence[str] = (),
                        axis_names: tuple[str, str] = ("source pieces", "output pieces"),
                        scale: float = 1.0) -> np.ndarray:
    """{title: (R, C) matrix} as panels in a row on white: RGB pixels (H, W, 3). The titles
    in `weights` are drawn as they are, the others row-scaled."""
    panels = [panel(values, title, rows, columns, weights=title in weights,
                    axis_names=axis_names, scale=scale) for title, values in matrices.items()]
    height = max(p.shape[0] for p in panels)
    width = sum(p.shape[1] for p in panels) + GAP * (len(panels) - 1)
    canvas = np.full((height, width, 3), 255, dtype=np.uint8)
    left = 0
    for pixels in panels:
        canvas[: pixels.shape[0], left : left + pixels.shape[1]] = pixels
        left += pixels.shape[1] + GAP
    return canvas
