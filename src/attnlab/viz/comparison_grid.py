"""Attention heatmaps of several members for one sentence, side by side on one colour scale.

Each panel is a soft alignment as in Bahdanau et al. 2015, Fig. 3 (source words across the
top, the member's translation down the left, black 0 .. white 1). The panels are laid out in
inches by hand, like attnlab.viz.heatmap.matrix_figure, so every weight cell is the same square in
every panel: the cell, the token font and the number of columns follow the sentence length, so
that a short sentence fits three or four panels across a 900-pixel report column and a long one
gets a column of its own, taller rather than unreadable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from attnlab.viz.heatmap import LABEL_CHARS, shorten

DPI = 110
WIDTH_INCHES = 900 / DPI  # the report's column
CMAP = "gray"  # as plot_alignment
MAX_COLUMNS = 4
MIN_CELL, MAX_CELL = 0.12, 0.3  # inches a weight cell; 0.12 holds a 7-point label
MAX_PANEL_INCHES = 12.0  # a longer side gets smaller cells, then loses its labels
MAX_FONT, MIN_FONT = 9.0, 5.0  # points of a token label; below MIN_FONT no labels
CELL_FONT = 0.8 * 72  # points of label per inch of cell: a rotated label fits across its cell
TITLE_FONT = 9.5
GAP = 0.2  # inches between panels
LABEL_PAD = 0.1  # inches between token labels and cells
TITLE_INCHES = 0.3  # a panel's title
HEADER_INCHES = 0.6  # the figure's title and the line under it
TITLE_LINE_INCHES = 0.2  # each further line of the title
BAR_INCHES = 0.8  # the colour bar and its labels


@dataclass(frozen=True)
class GridLayout:
    """Inches and points of a panel grid: `columns` panels a row, square cells `cell` wide,
    token labels in `font` points (none when font < MIN_FONT), `left` for the target tokens,
    `top` for the source tokens and panel title, `column` from one panel to the next."""

    columns: int
    cell: float
    font: float
    left: float
    top: float
    column: float

    @property
    def labelled(self) -> bool:
        return self.font >= MIN_FONT


def _widest(texts: Sequence[str]) -> float:
    """Inches of the widest text at 1 point (widths scale with the size); 0 for none. Measured
    with the Agg renderer and the font family of the rc_context in force."""
    renderer = FigureCanvasAgg(Figure(dpi=DPI)).get_renderer()
    font = FontProperties(size=10)
    widths = [renderer.get_text_width_height_descent(text, font, ismath=False)[0]
              for text in set(texts)]
    return max(widths, default=0.0) / DPI / 10


def _cell_font(cell: float) -> float:
    return min(MAX_FONT, CELL_FONT * cell)


def _fitting_cell(columns: int, source_len: int, label_width: float) -> float:
    """The cell that fills WIDTH_INCHES with `columns` panels of source_len cells, each beside
    labels label_width * font wide, where the font follows the cell (_cell_font)."""
    spare = WIDTH_INCHES - BAR_INCHES - columns * (LABEL_PAD + GAP)
    cell = spare / (columns * (source_len + label_width * CELL_FONT))
    if _cell_font(cell) < MAX_FONT:
        return cell
    return (spare - columns * label_width * MAX_FONT) / (columns * source_len)


def grid_layout(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]],
                columns: int | None = None) -> GridLayout:
    """The layout of one panel per (source tokens, target tokens) pair: the most columns (up
    to MAX_COLUMNS) whose cells stay at least MIN_CELL within WIDTH_INCHES, else one column;
    `columns` given: that many, the figure wider than WIDTH_INCHES when they need it."""
    source_len = max(len(tokens) for tokens in sources)
    longest = max(source_len, *(len(tokens) for tokens in targets))
    target_width = _widest([t for tokens in targets for t in tokens])
    source_width = _widest([t for tokens in sources for t in tokens])
    choices = [columns] if columns else range(min(MAX_COLUMNS, len(sources)), 0, -1)
    for across in choices:
        cell = _fitting_cell(across, source_len, target_width)
        if cell >= MIN_CELL:
            break
    cell = min(max(cell, MIN_CELL), MAX_CELL, MAX_PANEL_INCHES / longest)
    font = _cell_font(cell)
    left = target_width * font + LABEL_PAD if font >= MIN_FONT else 0.0
    top = (source_width * font + LABEL_PAD if font >= MIN_FONT else 0.0) + TITLE_INCHES
    return GridLayout(across, cell, font, left, top, left + source_len * cell + GAP)


def _check_panel(label: str, weights, source: Sequence[str], target: Sequence[str]):
    weights = np.asarray(weights, dtype=float)
    expected = (len(target), len(source))
    if weights.shape != expected:
        raise ValueError(
            f"panel {label!r}: weights have shape {weights.shape} but there are {len(target)} "
            f"target and {len(source)} source tokens, so the shape should be {expected} "
            f"(target_len, source_len).")
    if weights.size == 0:
        raise ValueError(f"panel {label!r}: nothing to draw, weights have shape {weights.shape}.")
    return weights


def _draw_panel(figure: Figure, panel, layout: GridLayout, x: float, top: float):
    """Panel (label, weights (T, S), source (S,), target (T,)) with its cells' top-left corner
    at (x, top) inches from the figure's bottom-left; returns the image."""
    label, weights, source, target = panel
    width, height = figure.get_size_inches()
    rows, columns = weights.shape
    box = (x / width, (top - rows * layout.cell) / height,
           columns * layout.cell / width, rows * layout.cell / height)
    axes = figure.add_axes(box)
    image = axes.imshow(weights, cmap=CMAP, vmin=0.0, vmax=1.0, interpolation="nearest",
                        aspect="auto")
    vertical: dict[str, Any] = {"rotation": 90}  # the source words' tick label properties
    for axis, tokens, options in ((axes.xaxis, source, vertical), (axes.yaxis, target, {})):
        if layout.labelled:
            axis.set_ticks(range(len(tokens)), [shorten(str(t), LABEL_CHARS) for t in tokens],
                           fontsize=layout.font, **options)
        else:
            axis.set_ticks([])
    axes.xaxis.tick_top()  # source words read along the top, as in plot_alignment
    axes.tick_params(length=0, pad=2)
    fits = max(8, int(layout.column / (0.6 * TITLE_FONT / 72)))  # characters a column holds
    axes.set_title(shorten(str(label), fits), fontsize=TITLE_FONT, pad=4)
    return image


def heatmap_grid_figure(panels: Sequence[tuple[str, np.ndarray, Sequence[str], Sequence[str]]],
                        *, title: str, units: str = "words", columns: int | None = None,
                        legend: str | None = None) -> Figure:
    """One attention heatmap per member for the same sentence, on one 0..1 colour scale with a
    single colour bar; the member's label above each panel.

    panels: (member label, weights (target_len, source_len) with rows summing to 1, source
    tokens, target tokens). Members may translate to different lengths. A weights matrix that
    does not match its tokens is a ValueError naming the member. units: what the tokens are
    ("words", "characters"), for the figure's legend (or `legend`, the line under the title).
    columns: panels a row (default: as many as fit the report's column, at most MAX_COLUMNS).
    """
    if not panels:
        raise ValueError("nothing to draw: no panels.")
    panels = [(label, _check_panel(label, w, s, t), s, t) for label, w, s, t in panels]
    layout = grid_layout([s for *_, s, _ in panels], [t for *_, t in panels], columns)
    rows = [panels[i:i + layout.columns] for i in range(0, len(panels), layout.columns)]
    heights = [layout.top + max(len(t) for *_, t in row) * layout.cell + GAP for row in rows]
    width = layout.columns * layout.column + BAR_INCHES
    extra = TITLE_LINE_INCHES * title.count("\n")  # a title of several lines pushes down
    header = HEADER_INCHES + extra
    figure = Figure(figsize=(width, header + sum(heights)), dpi=DPI)
    top = header + sum(heights)
    figure.text(0.5 * (width - BAR_INCHES) / width, 1 - 0.08 / top, title, ha="center",
                va="top", fontsize=11)
    figure.text(0.5 * (width - BAR_INCHES) / width, 1 - (0.35 + extra) / top,
                legend or f"columns: source {units}; rows: the {units} each member produced",
                ha="center",
                va="top", fontsize=8.5, color="#444444")
    y = top - header
    for row, row_height in zip(rows, heights, strict=True):
        for index, panel in enumerate(row):
            image = _draw_panel(figure, panel, layout, index * layout.column + layout.left,
                                y - layout.top)
        y -= row_height
    _colour_bar(figure, image, layout, rows[0], top, header)
    return figure


def _colour_bar(figure: Figure, image, layout: GridLayout, first_row, top: float,
                header: float = HEADER_INCHES) -> None:
    """The shared scale, beside the first row of panels, at least an inch tall."""
    width, _ = figure.get_size_inches()
    cells = max(len(t) for *_, t in first_row) * layout.cell
    length = max(cells, 1.0)
    upper = top - header - layout.top
    bar = figure.add_axes(((layout.columns * layout.column + 0.05) / width,
                           (upper - length) / top, 0.15 / width, length / top))
    colour_bar = figure.colorbar(image, cax=bar)
    colour_bar.set_label("attention weight (0 to 1)", fontsize=9)
    colour_bar.ax.tick_params(labelsize=8)
