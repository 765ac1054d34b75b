"""Attention heatmaps: the soft alignment of Bahdanau et al. 2015, Fig. 3, and any weight matrix.

Arrays in, files (or pixel arrays) out. Figures are built with matplotlib's object API and the Agg
canvas, never pyplot, so nothing global changes and no window can open.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from attnlab.viz.fonts import font_families

CELL_INCHES = 0.32  # one weight cell; large enough for a 9-pt label beside it
DPI = 100


def _check_matrix(weights, rows: Sequence[str], cols: Sequence[str]) -> np.ndarray:
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(rows), len(cols)):
        raise ValueError(
            f"weights have shape {weights.shape} but there are {len(rows)} row labels and "
            f"{len(cols)} column labels."
        )
    if weights.size == 0:
        raise ValueError(f"nothing to draw: weights have shape {weights.shape}.")
    return weights


def matrix_figure(
    weights,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None = None,
    cmap: str = "gray",
    value_range: tuple[float, float] | None = (0.0, 1.0),
    colorbar: bool = False,
    font_path: str | os.PathLike | None = None,
) -> Figure:
    """A Figure with one cell per weights[r, c]; column labels on top (rotated), rows on the left.

    weights (R, C). value_range fixes the colour scale (None = the data's min..max).
    """
    labels = [str(label) for label in (*row_labels, *col_labels, title or "")]
    weights = _check_matrix(weights, row_labels, col_labels)
    rows, cols = weights.shape
    vmin, vmax = value_range if value_range is not None else (None, None)
    with matplotlib.rc_context({"font.family": font_families(labels, font_path)}):
        # The axes fill the figure exactly, so every cell is CELL_INCHES square whatever the
        # label lengths; labels and title lie outside it and bbox_inches="tight" takes them in.
        width, height = CELL_INCHES * cols, CELL_INCHES * rows
        figure = Figure(figsize=(width, height), dpi=DPI)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        image = axes.imshow(weights, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
        axes.set_xticks(range(cols), [str(label) for label in col_labels], rotation=90)
        axes.set_yticks(range(rows), [str(label) for label in row_labels])
        # Source words read along the top, as in Bahdanau et al. (2015) Fig. 3.
        axes.xaxis.tick_top()
        axes.tick_params(length=0, labelsize=9)
        if title:
            axes.set_title(title, pad=12, fontsize=10)
        if colorbar:
            bar = figure.add_axes((1 + 0.1 / width, 0.0, 0.15 / width, 1.0))
            figure.colorbar(image, cax=bar)
    return figure


def save_figure(figure: Figure, path: str | os.PathLike) -> Path:
    """Write figure to path; the suffix (.png, .svg, .pdf) picks the format."""
    path = Path(path)
    if path.suffix.lower() not in {".png", ".svg", ".pdf"}:
        raise ValueError(f"cannot tell the image format of {path}; use .png, .svg or .pdf")
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(figure)  # attach an Agg canvas: the vector formats pick their own backend
    # The families live in the figure's text objects, so saving outside rc_context is fine.
    figure.savefig(path, bbox_inches="tight", pad_inches=0.1)
    return path


def figure_to_array(figure: Figure) -> np.ndarray:
    """RGB pixels (H, W, 3) uint8 of figure, cropped exactly as the PNG file would be."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    buffer.seek(0)
    with Image.open(buffer) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()


def plot_alignment(weights, source_tokens: Sequence[str], target_tokens: Sequence[str],
                   path: str | os.PathLike, *, title: str | None = None,
                   font_path: str | os.PathLike | None = None) -> Path:
    """Heatmap of soft alignment weights (T_tgt, T_src) to path; returns the path.

    Source words across the top, produced (target) words down the left, greyscale from black
    (weight 0) to white (weight 1) as in Bahdanau et al. 2015, Fig. 3.
    """
    return save_figure(matrix_figure(weights, target_tokens, source_tokens, title=title,
                                     font_path=font_path), path)


def alignment_figure(weights, source_tokens: Sequence[str], target_tokens: Sequence[str], *,
                     title: str | None = None,
                     font_path: str | os.PathLike | None = None) -> np.ndarray:
    """The plot_alignment heatmap as RGB pixels (H, W, 3) uint8, e.g. for TensorBoard add_image
    with dataformats="HWC"."""
    return figure_to_array(matrix_figure(weights, target_tokens, source_tokens, title=title,
                                         font_path=font_path))


def plot_weight_matrix(weights, row_labels: Sequence[str], col_labels: Sequence[str],
                       path: str | os.PathLike, *, title: str | None = None,
                       font_path: str | os.PathLike | None = None) -> Path:
    """Any labelled matrix (R, C) as a heatmap with a colour bar, scaled to the data's range;
    perceptual colormap (viridis) since the values need not be probabilities."""
    figure = matrix_figure(weights, row_labels, col_labels, title=title, cmap="viridis",
                           value_range=None, colorbar=True, font_path=font_path)
    return save_figure(figure, path)
