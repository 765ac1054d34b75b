"""Attention heatmaps: the soft alignment of Bahdanau et al. 2015, Fig. 3, and any weight matrix.

Arrays in, files (or pixel arrays) out. Figures are built with matplotlib's object API and the Agg
canvas, never pyplot, so nothing global changes and no window can open. A heatmap too large for
a screen is drawn smaller, never refused: see MAX_PIXELS.
"""

from __future__ import annotations

import io
import math
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.ticker import MaxNLocator
from PIL import Image

from attnlab.viz.fonts import font_families

CELL_INCHES = 0.32  # one weight cell; large enough for a 9-pt label beside it
DPI = 100
CELL_PIXELS = CELL_INCHES * DPI
FONT_SIZE = 9
# No side of a heatmap's cells is drawn larger than this: past MAX_PIXELS / CELL_PIXELS cells a
# side (250) the cells shrink, below MIN_LABEL_PIXELS (past 800 cells) the labels go, and past
# MAX_PIXELS cells neighbouring cells are averaged (heatmap_scale; its note says so). A
# 10,000-word sentence is a picture a screen can show, not a 320,000-pixel-wide PNG, and the
# largest figure takes well under 1 GB to draw (see _draw_cells).
MAX_PIXELS = 8000
MIN_LABEL_PIXELS = 10
LABEL_CHARS = 30  # a longer label (or a title past TITLE_CHARS) is cut short with "…"
TITLE_CHARS = 120
TITLE_CHAR_PIXELS = 7  # about one 10-point character: a title wraps at the heatmap's width
MIN_TITLE_CHARS = 40
COLORBAR_INCHES = 0.15
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
TILE_PIXELS = 1_000_000  # output pixels drawn by one image (see _draw_cells)


def shorten(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with "…" at the end when it is longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def token_label(token: str) -> str:
    """A token as a label: a space (a character model's) and a bare word-boundary piece
    (sentencepiece's "▁") both "␣", other whitespace "·", the empty token "∅". The explorer
    page and the notebook views label tokens by the same rule (label() in static/svg.js)."""
    token = str(token)
    if token == "":
        return "∅"
    if token.replace("\u2581", "").strip() == "":
        return "".join("␣" if c in " \u2581" else "·" for c in token)
    return token


@dataclass(frozen=True)
class AxisScale:
    """How one side of a heatmap is drawn: `cells` weights along it, `block` neighbours averaged
    into each drawn cell, each drawn cell `pixels` long."""

    cells: int
    block: int
    pixels: float

    @property
    def labelled(self) -> bool:
        return self.block == 1 and self.pixels >= MIN_LABEL_PIXELS

    @property
    def font_size(self) -> float:
        return min(FONT_SIZE, 0.7 * self.pixels)  # points: a label fits its cell

    def describe(self, name: str) -> str | None:
        """What changed from full size, or None."""
        if self.block > 1:
            return f"{name}: {self.block} averaged into each pixel, no labels"
        if not self.labelled:
            return f"{name}: {self.pixels:.1f} pixels each, no labels"
        if self.pixels < CELL_PIXELS:
            return f"{name}: {self.pixels:.0f} pixels each, labels in {self.font_size:.0f}-point"
        return None


def axis_scale(cells: int) -> AxisScale:
    block = max(1, math.ceil(cells / MAX_PIXELS))
    return AxisScale(cells, block, min(CELL_PIXELS, MAX_PIXELS / math.ceil(cells / block)))


@dataclass(frozen=True)
class HeatmapScale:
    """How a (rows, cols) heatmap is drawn; `note` says how it differs from full size."""

    rows: AxisScale
    cols: AxisScale

    @property
    def note(self) -> str | None:
        changes = [c for c in (self.rows.describe("rows"), self.cols.describe("columns")) if c]
        if not changes:
            return None
        return (f"the heatmap has {self.rows.cells:,} x {self.cols.cells:,} cells, too many "
                f"for {MAX_PIXELS:,} pixels a side, so it is drawn smaller ({'; '.join(changes)})")

    def reduce(self, weights: np.ndarray) -> np.ndarray:
        """weights (R, C) -> the cells drawn: blocks of neighbours averaged where block > 1."""
        for axis, scale in enumerate((self.rows, self.cols)):
            if scale.block > 1:
                starts = np.arange(0, weights.shape[axis], scale.block)
                sizes = np.diff(np.append(starts, weights.shape[axis]))
                shape = (-1, 1) if axis == 0 else (1, -1)
                weights = np.add.reduceat(weights, starts, axis=axis) / sizes.reshape(shape)
        return weights


def heatmap_scale(rows: int, cols: int) -> HeatmapScale:
    """How matrix_figure draws (rows, cols) cells: full size (CELL_INCHES a cell, labels) up to
    250 a side, then smaller (see MAX_PIXELS)."""
    return HeatmapScale(axis_scale(rows), axis_scale(cols))


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


def _label_axis(axis, scale: AxisScale, labels: Sequence[str], **options) -> None:
    """Ticks with `labels` (cut to LABEL_CHARS) when the scale has room, none otherwise."""
    if not scale.labelled:
        axis.set_ticks([])
        return
    axis.set_ticks(range(scale.cells), [shorten(token_label(label), LABEL_CHARS)
                                        for label in labels],
                   fontsize=scale.font_size, **options)


def _draw_cells(axes, drawn: np.ndarray, row_area: float, **style) -> AxesImage:
    """imshow `drawn` (R, C) in bands of rows of at most TILE_PIXELS output pixels: matplotlib
    resamples each image at output size in float64 (~50 bytes a pixel), so one image of a large
    heatmap would take gigabytes. A band reaches one row into the next, which draws over it,
    so no seam shows. Returns the first band (for a colour bar)."""
    rows, cols = drawn.shape
    per_band = max(1, int(TILE_PIXELS // max(row_area, 1.0)))  # rows of one band
    images = []
    for start in range(0, rows, per_band):
        stop = min(start + per_band + 1, rows)
        images.append(axes.imshow(drawn[start:stop], extent=(-0.5, cols - 0.5, stop - 0.5,
                                                             start - 0.5),
                                  interpolation="nearest", aspect="auto", **style))
    axes.set_xlim(-0.5, cols - 0.5)
    axes.set_ylim(rows - 0.5, -0.5)  # row 0 at the top
    return images[0]


def wrap_title(title: str, width_pixels: float) -> str:
    """`title` cut to TITLE_CHARS, each of its lines wrapped at about `width_pixels` (at least
    MIN_TITLE_CHARS characters), so a long title does not make the figure wider than its cells."""
    chars = max(MIN_TITLE_CHARS, int(width_pixels / TITLE_CHAR_PIXELS))
    return "\n".join(textwrap.fill(line, chars, break_long_words=False, break_on_hyphens=False)
                     for line in shorten(title, TITLE_CHARS).splitlines())


def _add_colorbar(figure: Figure, image: AxesImage, width: float, height: float) -> None:
    """A colour bar the height of the cells, just right of them (outside the figure box, which
    bbox_inches="tight" takes in); as many ticks as fit."""
    bar = figure.add_axes((1 + 0.1 / width, 0.0, COLORBAR_INCHES / width, 1.0))
    figure.colorbar(image, cax=bar)
    bar.yaxis.set_major_locator(MaxNLocator(max(1, int(height * DPI / 40))))
    bar.tick_params(labelsize=8)


def matrix_figure(
    weights,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str | None = None,
    cmap: str = "gray",
    value_range: tuple[float, float] | None = (0.0, 1.0),
    colorbar: bool = False,
    axis_names: tuple[str, str] | None = None,
    font_path: str | os.PathLike | None = None,
) -> Figure:
    """A Figure with one cell per weights[r, c]; column labels on top (rotated), rows on the left.

    weights (R, C). value_range fixes the colour scale (None = the data's min..max). axis_names:
    (what the columns are, what the rows are), e.g. ("source words", "output words"), written
    above and left of the labels. A side of more than 250 cells is drawn smaller
    (heatmap_scale says how), so no side passes MAX_PIXELS.
    """
    weights = _check_matrix(weights, row_labels, col_labels)
    scale = heatmap_scale(*weights.shape)
    drawn = scale.reduce(weights)  # (R', C')
    # The axes fill the figure exactly, so every cell has its size whatever the label
    # lengths; labels, names, title and colour bar lie outside it and bbox_inches="tight"
    # takes them in.
    width = scale.cols.pixels * drawn.shape[1] / DPI
    height = scale.rows.pixels * drawn.shape[0] / DPI
    title = wrap_title(title, width * DPI) if title else None
    shown = [*(row_labels if scale.rows.labelled else []),
             *(col_labels if scale.cols.labelled else []), title or "", *(axis_names or ())]
    vmin, vmax = value_range if value_range is not None else (weights.min(), weights.max())
    with matplotlib.rc_context({"font.family": font_families(map(str, shown), font_path)}):
        figure = Figure(figsize=(width, height), dpi=DPI)
        axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        row_area = scale.rows.pixels * scale.cols.pixels * drawn.shape[1]  # pixels of a row
        image = _draw_cells(axes, drawn, row_area, cmap=cmap, vmin=vmin, vmax=vmax)
        _label_axis(axes.xaxis, scale.cols, col_labels, rotation=90)
        _label_axis(axes.yaxis, scale.rows, row_labels)
        # Source words read along the top, as in Bahdanau et al. (2015) Fig. 3.
        axes.xaxis.tick_top()
        axes.tick_params(length=0)
        if axis_names:
            axes.xaxis.set_label_position("top")
            axes.set_xlabel(axis_names[0], fontsize=FONT_SIZE, color="#444")
            axes.set_ylabel(axis_names[1], fontsize=FONT_SIZE, color="#444")
        if title:
            axes.set_title(title, pad=8, fontsize=10)
        if colorbar:
            _add_colorbar(figure, image, width, height)
    return figure


def image_format(path: str | os.PathLike) -> str:
    """"png", "svg" or "pdf", from the suffix of `path`; ValueError for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"cannot tell the image format of {path}; use .png, .svg or .pdf")
    return FORMATS[suffix]


def write_figure(figure: Figure, file: BinaryIO, format: str) -> None:
    """Write figure to an open binary file as "png", "svg" or "pdf", cropped to its contents."""
    FigureCanvasAgg(figure)  # attach an Agg canvas: the vector formats pick their own backend
    # The families live in the figure's text objects, so saving outside rc_context is fine.
    figure.savefig(file, format=format, bbox_inches="tight", pad_inches=0.1)


def save_figure(figure: Figure, path: str | os.PathLike) -> Path:
    """Write figure to path; the suffix (.png, .svg, .pdf) picks the format."""
    path = Path(path)
    format = image_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        write_figure(figure, file, format)
    return path


def figure_to_array(figure: Figure) -> np.ndarray:
    """RGB pixels (H, W, 3) uint8 of figure, cropped exactly as the PNG file would be."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    buffer.seek(0)
    with Image.open(buffer) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()


# What the columns and rows of an alignment are when the caller does not say (words, pieces
# or characters: only the caller knows).
ALIGNMENT_AXES = ("source", "output")


def alignment_matrix_figure(weights, source_tokens: Sequence[str], target_tokens: Sequence[str],
                            *, title: str | None = None,
                            axis_names: tuple[str, str] = ALIGNMENT_AXES,
                            font_path: str | os.PathLike | None = None) -> Figure:
    """The alignment heatmap of weights (T_tgt, T_src) as a Figure: source tokens across the
    top, produced (target) tokens down the left, greyscale from black (weight 0) to white
    (weight 1) as in Bahdanau et al. 2015, Fig. 3, with a colour bar and the axes named
    (axis_names: source side, output side, e.g. ("source words", "output words"))."""
    return matrix_figure(weights, target_tokens, source_tokens, title=title, colorbar=True,
                         axis_names=axis_names, font_path=font_path)


def plot_alignment(weights, source_tokens: Sequence[str], target_tokens: Sequence[str],
                   path: str | os.PathLike, *, title: str | None = None,
                   axis_names: tuple[str, str] = ALIGNMENT_AXES,
                   font_path: str | os.PathLike | None = None) -> Path:
    """The alignment_matrix_figure of weights (T_tgt, T_src) to path; returns the path."""
    return save_figure(alignment_matrix_figure(weights, source_tokens, target_tokens,
                                               title=title, axis_names=axis_names,
                                               font_path=font_path), path)


def alignment_figure(weights, source_tokens: Sequence[str], target_tokens: Sequence[str], *,
                     title: str | None = None, axis_names: tuple[str, str] = ALIGNMENT_AXES,
                     font_path: str | os.PathLike | None = None) -> np.ndarray:
    """The plot_alignment heatmap as RGB pixels (H, W, 3) uint8, e.g. for TensorBoard add_image
    with dataformats="HWC"."""
    return figure_to_array(alignment_matrix_figure(weights, source_tokens, target_tokens,
                                                   title=title, axis_names=axis_names,
                                                   font_path=font_path))


def plot_weight_matrix(weights, row_labels: Sequence[str], col_labels: Sequence[str],
                       path: str | os.PathLike, *, title: str | None = None,
                       font_path: str | os.PathLike | None = None) -> Path:
    """Any labelled matrix (R, C) as a heatmap with a colour bar, scaled to the data's range;
    perceptual colormap (viridis) since the values need not be probabilities."""
    figure = matrix_figure(weights, row_labels, col_labels, title=title, cmap="viridis",
                           value_range=None, colorbar=True, font_path=font_path)
    return save_figure(figure, path)
