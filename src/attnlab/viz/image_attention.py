"""Where the captioner looks: the image once per generated word, its attention map upsampled,
smoothed and laid over it, the word as the panel's title (Xu et al. 2015, Fig. 2 and 3).

Arrays in, a matplotlib Figure out (object API and Agg, never pyplot), as in attnlab.viz.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from attnlab.viz.fonts import font_families

PANEL_INCHES = 1.6
OVERLAY_ALPHA = 0.6  # how much of the (white = attended) map covers the image


def gaussian_kernel(sigma: float) -> np.ndarray:
    """A normalised 1-D Gaussian, truncated at 3 sigma."""
    radius = max(1, math.ceil(3 * sigma))
    x = np.arange(-radius, radius + 1, dtype=float)
    kernel = np.exp(-(x**2) / (2 * sigma**2))
    return kernel / kernel.sum()


def upsample_attention(weights: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """alpha on the (h, w) grid -> (H, W) pixels: each cell's weight over its pixels, then a
    Gaussian blur of half a cell (Xu et al. used skimage's pyramid_expand the same way)."""
    weights = np.asarray(weights, dtype=float)
    (h, w), (height, width) = weights.shape, size
    rows = np.arange(height) * h // height  # the cell each pixel lies in
    cols = np.arange(width) * w // width
    pixels = weights[rows][:, cols]  # (H, W)
    kernel = gaussian_kernel(0.5 * height / h)
    pad = len(kernel) // 2
    for axis in (0, 1):  # separable blur; edge padding keeps the borders from darkening
        padded = np.pad(pixels, [(pad, pad) if a == axis else (0, 0) for a in (0, 1)],
                        mode="edge")
        pixels = np.apply_along_axis(np.convolve, axis, padded, kernel, mode="valid")
    return pixels


def image_attention_figure(pixels: np.ndarray, words: Sequence[str], attention: np.ndarray, *,
                     marks: Sequence[tuple[int, int]] | None = None, columns: int = 8,
                     title: str | None = None) -> Figure:
    """The input image, then one panel per word with its attention map overlaid.

    pixels (H, W, 3) uint8; attention (len(words), h, w); marks: per word the (row, col) cell
    to mark with a cross (hard attention's chosen location), or None. Panels wrap after
    `columns` per row.
    """
    attention = np.asarray(attention, dtype=float)
    if attention.ndim != 3 or attention.shape[0] != len(words):
        raise ValueError(f"attention {attention.shape} must be (words={len(words)}, h, w)")
    panels = len(words) + 1
    rows, cols = math.ceil(panels / columns), min(panels, columns)
    height, width = pixels.shape[:2]
    labels = [*map(str, words), title or ""]
    with matplotlib.rc_context({"font.family": font_families(labels)}):
        size = (PANEL_INCHES * cols, (PANEL_INCHES + 0.3) * rows + 0.3 * bool(title))
        figure = Figure(figsize=size, dpi=100)
        axes = figure.subplots(rows, cols, squeeze=False).ravel()
        for ax in axes:
            ax.set_axis_off()
        axes[0].imshow(pixels)
        axes[0].set_title("(image)", fontsize=9)
        h, w = attention.shape[1:]
        for index, word in enumerate(words):
            ax = axes[index + 1]
            heat = upsample_attention(attention[index], (height, width))
            ax.imshow(pixels)
            ax.imshow(heat, cmap="gray", alpha=OVERLAY_ALPHA, vmin=0.0, vmax=max(heat.max(), 1e-12))
            if marks is not None:
                row, col = marks[index]
                ax.plot((col + 0.5) * width / w - 0.5, (row + 0.5) * height / h - 0.5, "+",
                        color="cyan", markersize=10, markeredgewidth=2)
            ax.set_title(str(word), fontsize=10)
        if title:
            figure.suptitle(title, fontsize=10)
    return figure
