"""Self-attention read step by step: the figure of Cheng, Dong & Lapata 2016 (LSTMN), Fig. 1.

One text line per step t: the word being read in red, each earlier word on a blue box whose
opacity is its attention weight s_i^t, later words in light grey (not yet read).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from attnlab.viz.fonts import font_families
from attnlab.viz.heatmap import (
    LABEL_CHARS,
    MAX_PIXELS,
    plot_weight_matrix,
    save_figure,
    shorten,
    token_label,
)
from attnlab.viz.notebook import Displayed, View, reading_view

FONT_SIZE = 11
LINE_INCHES = 0.32
GAP_INCHES = 0.08  # space between words
MARGIN_INCHES = 0.1
CURRENT_COLOUR = "#d62728"
MEMORY_RGB = (0.2, 0.45, 1.0)  # light enough that black text on a full box stays legible
FUTURE_COLOUR = "#bbbbbb"
# Each line shows the whole sentence, so the figure holds words^2 texts: past MAX_WORDS (or
# MAX_PIXELS wide) only the first words are drawn, and a last line says so. The weight matrix
# of plot_reading shows every word (smaller, see heatmap_scale).
MAX_WORDS = 100


def _check(tokens: Sequence[str], weights) -> np.ndarray:
    weights = np.asarray(weights, dtype=float)
    steps = len(tokens)
    if weights.shape != (steps, steps):
        raise ValueError(f"weights have shape {weights.shape}, expected ({steps}, {steps}).")
    if not np.all(np.isfinite(weights)) or weights.min() < 0 or weights.max() > 1 + 1e-6:
        raise ValueError("self-attention weights must be finite and within [0, 1].")
    return weights


def _word_widths(tokens: Sequence[str], font: FontProperties, dpi: float) -> list[float]:
    """Width of each token in inches, measured with the Agg renderer that will draw it.

    Measured in bold, the widest style used, so the current (bold) word never overlaps the next.
    """
    renderer = FigureCanvasAgg(Figure(dpi=dpi)).get_renderer()
    bold = font.copy()
    bold.set_weight("bold")
    return [
        renderer.get_text_width_height_descent(token, bold, ismath=False)[0] / dpi
        for token in tokens
    ]


def words_shown(widths: Sequence[float], dpi: float) -> int:
    """How many words, of `widths` inches each, the reading figure draws: the most, up to
    MAX_WORDS, whose line stays within MAX_PIXELS."""
    ends = np.cumsum(np.add(widths[:MAX_WORDS], GAP_INCHES)) + 2 * MARGIN_INCHES
    return max(1, int(np.searchsorted(ends, MAX_PIXELS / dpi, side="right")))


def self_attention_figure(
    tokens: Sequence[str], weights, *, font_path: str | os.PathLike | None = None
) -> Figure:
    """The LSTMN reading figure for tokens (T,) and weights (T, T), row t over positions < t.

    Entries weights[t, i] with i >= t are ignored: step t attends only to earlier words. A long
    sentence is drawn up to its first MAX_WORDS words (see words_shown), the last line saying so.
    """
    weights = _check(tokens, weights)
    tokens = [shorten(token_label(token), LABEL_CHARS) for token in tokens]
    dpi = 100
    with matplotlib.rc_context({"font.family": font_families(tokens[:MAX_WORDS], font_path)}):
        font = FontProperties(size=FONT_SIZE)
        widths = _word_widths(tokens[:MAX_WORDS], font, dpi)
        shown = words_shown(widths, dpi)
        starts = np.concatenate([[0.0], np.cumsum(np.add(widths[:shown], GAP_INCHES))])
        lines = shown + (shown < len(tokens))  # one more for the note
        size = (starts[-1] + 2 * MARGIN_INCHES, lines * LINE_INCHES + 2 * MARGIN_INCHES)
        figure = Figure(figsize=(max(size[0], 1.0), max(size[1], 0.5)), dpi=dpi)
        top = size[1] - MARGIN_INCHES
        for t in range(shown):
            _draw_step(figure, tokens[:shown], weights[t], t, starts, top, font)
        if shown < len(tokens):
            figure.text(MARGIN_INCHES, top - (shown + 0.5) * LINE_INCHES,
                        f"the first {shown} of {len(tokens):,} words", fontproperties=font,
                        va="center", ha="left", transform=figure.dpi_scale_trans,
                        color=FUTURE_COLOUR)
    return figure


def _draw_step(figure: Figure, tokens: list[str], weights: np.ndarray, t: int,
               starts: np.ndarray, top: float, font: FontProperties) -> None:
    """Line t: word t red, earlier words on boxes as opaque as weights[i], later ones grey."""
    y = top - (t + 0.5) * LINE_INCHES
    for i, token in enumerate(tokens):
        style: dict = {"color": "black"}
        if i == t:
            style = {"color": CURRENT_COLOUR, "fontweight": "bold"}
        elif i > t:
            style = {"color": FUTURE_COLOUR}
        elif weights[i] > 0:
            # Box colour carries the weight; the word itself stays fully opaque.
            box = (*MEMORY_RGB, float(min(weights[i], 1.0)))
            style["bbox"] = {"facecolor": box, "edgecolor": "none", "pad": 1.5}
        figure.text(MARGIN_INCHES + starts[i], y, token, fontproperties=font, va="center",
                    ha="left", transform=figure.dpi_scale_trans, **style)


def plot_self_attention(
    tokens: Sequence[str],
    weights,
    path: str | os.PathLike,
    *,
    font_path: str | os.PathLike | None = None,
) -> Path:
    """Write the LSTMN reading figure (see self_attention_figure) to path; returns the path."""
    return save_figure(self_attention_figure(tokens, weights, font_path=font_path), path)


@dataclass(repr=False)
class SentenceReading(Displayed):
    """What a self-attending reader (the LSTMN) attended to while reading one sentence:
    tokens (T,) in reading order; weights (L, T, T): layer l's s^t in row t, over i < t.

    In a notebook it draws as the explorer's reading figure (its top layer); `repr` is a
    plain table."""

    tokens: list[str]
    weights: np.ndarray

    def _view(self) -> View:
        return reading_view(self.tokens, np.asarray(self.weights)[-1])


def plot_reading(reading: SentenceReading, output: str | os.PathLike,
                 matrix: str | os.PathLike | None = None, layer: int = -1) -> tuple[Path, Path]:
    """Write the reading figure (one line per step; current word red, earlier words shaded by
    weight) and the step x step weight matrix (default: OUTPUT with -matrix) of layer `layer`
    (default: the top one). Returns both paths."""
    layers = reading.weights.shape[0]
    if not -layers <= layer < layers:
        raise ValueError(f"layer {layer}: the model has {layers} layer(s)")
    weights = reading.weights[layer]  # (T, T)
    output = Path(output)
    matrix = Path(matrix) if matrix is not None else output.with_name(
        f"{output.stem}-matrix{output.suffix}")
    plot_self_attention(reading.tokens, weights, output)
    plot_weight_matrix(weights, reading.tokens, reading.tokens, matrix,
                       title="step (row) attends to earlier position (column)")
    return output, matrix
