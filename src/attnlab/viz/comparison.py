"""Figures that compare the members (one trained model each) of an experiment suite.

Plain numbers keyed by member name in, PNG bytes out. A member keeps one colour and marker in
every figure (tab10, in the order the members are given), so pass the same members in the same
order to each function; a member without data keeps its place (an empty series, a None bar).
Built with matplotlib's object API and the Agg canvas, never pyplot, as in attnlab.viz.heatmap,
and sized to be read at 900 pixels wide, the column of the HTML report.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from attnlab.viz.comparison_grid import DPI, WIDTH_INCHES, heatmap_grid_figure
from attnlab.viz.fonts import font_families
from attnlab.viz.heatmap import write_figure

PALETTE = tuple(matplotlib.color_sequences["tab10"])  # the tab10 colormap's ten colours
MARKERS = "osD^vP*Xph"
CHAR_INCHES = 0.075  # mean width of a 9-point character, to size legends and tick labels
# Reference lines are dark and dashed, so they never pass for a member's colour.
REFERENCE_STYLES = (("#222222", (0, (6, 3))), ("#666666", (0, (2, 2))),
                    ("#222222", (0, (6, 2, 1, 2))), ("#666666", (0, (10, 3))))


def member_style(index: int) -> dict:
    """Colour, marker and line style of the member at `index` in the given order; past ten
    members the colours repeat with dashed lines."""
    return {"color": PALETTE[index % len(PALETTE)], "marker": MARKERS[index % len(MARKERS)],
            "linestyle": "-" if index < len(PALETTE) else "--"}


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _png(texts: Iterable[str], build) -> bytes:
    """PNG bytes of the Figure that build() returns, drawn with fonts that have the glyphs of
    texts; it is saved inside the same context, as tick labels are made while drawing."""
    with matplotlib.rc_context({"font.family": font_families(map(str, texts))}):
        buffer = io.BytesIO()
        write_figure(build(), buffer, "png")
    return buffer.getvalue()


def _legend_columns(labels: Sequence[str], width: float) -> int:
    longest = max((len(label) for label in labels), default=1)
    return max(1, min(len(labels), 4, int(width / (0.6 + CHAR_INCHES * longest))))


def _line_axes(members: Sequence[str], title: str) -> tuple[Figure, Axes]:
    """A report-wide figure whose legend (the members, below the axes) adds height by rows."""
    rows = math.ceil(len(members) / _legend_columns(members, WIDTH_INCHES))
    figure = Figure(figsize=(WIDTH_INCHES, 4.2 + 0.22 * rows), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    axes.grid(alpha=0.3)
    axes.set_title(title, fontsize=11)
    return figure, axes


def _member_legend(figure: Figure, axes: Axes) -> None:
    """The members below the axes, read row by row in the given order (matplotlib fills the
    columns first, splitting as np.array_split does)."""
    entries = list(zip(*axes.get_legend_handles_labels(), strict=True))
    columns = _legend_columns([label for _, label in entries], WIDTH_INCHES)
    entries = [entries[i] for c in range(columns) for i in range(c, len(entries), columns)]
    figure.legend(*zip(*entries, strict=True), loc="outside lower center", frameon=False,
                  fontsize=9, ncols=columns)


def _plot_member(axes: Axes, index: int, member: str, xs, ys) -> None:
    """One member's line; NaN values leave gaps, and a member with no value says so."""
    ys = np.asarray(ys, dtype=float)
    label = member if np.isfinite(ys).any() else f"{member} (no data)"
    markevery = max(1, len(ys) // 25)  # markers stay countable on a long curve
    axes.plot(xs, ys, label=label, linewidth=1.6, markersize=5, markevery=markevery,
              **member_style(index))


def _check_members(series: Mapping) -> None:
    if not series:
        raise ValueError("nothing to draw: no members.")


def _bucket_ticks(series: Mapping[str, list[tuple[str, float | None, int]]]
                  ) -> list[tuple[str, str]]:
    """(bucket, tick label) in first-seen order; the label gives the bucket's sentence count,
    or its range where members disagree."""
    counts: dict[str, set[int]] = {}
    for items in series.values():
        for label, _, count in items:
            counts.setdefault(str(label), set()).add(int(count))
    ticks = []
    for label, seen in counts.items():
        low, high = min(seen), max(seen)
        ticks.append((label, f"{label}\n({low:,})" if low == high else
                      f"{label}\n({low:,}–{high:,})"))
    return ticks


def length_curves_figure(series: Mapping[str, list[tuple[str, float | None, int]]], *,
                         metric: str = "BLEU", title: str) -> Figure:
    """One line per member of `metric` over source-length buckets (Bahdanau et al. 2015,
    Fig. 2; Luong et al. 2015, Fig. 6).

    series: member -> [(bucket label such as "0-9", value, sentences in the bucket)]. The x axis
    holds every bucket in first-seen order, its count in brackets; a NaN/None value or a bucket a
    member lacks leaves a gap in that member's line.
    """
    _check_members(series)
    ticks = _bucket_ticks(series)
    positions = np.arange(len(ticks))
    figure, axes = _line_axes(list(series), title)
    for index, (member, items) in enumerate(series.items()):
        values = {str(label): _number(value) for label, value, _ in items}
        _plot_member(axes, index, member, positions,
                     [values.get(bucket, math.nan) for bucket, _ in ticks])
    axes.set_xticks(positions, [label for _, label in ticks], fontsize=9)
    axes.set_xlabel("source sentence length in words (sentences in the bucket)")
    axes.set_ylabel(metric)
    if all(_number(value) >= 0 for items in series.values() for _, value, _ in items
           if np.isfinite(_number(value))):
        axes.set_ylim(bottom=0)
    _member_legend(figure, axes)
    return figure


def length_curves_png(series: dict[str, list[tuple[str, float | None, int]]], *,
                      metric: str = "BLEU", title: str) -> bytes:
    """length_curves_figure as PNG bytes."""
    texts = [*series, metric, title, *(label for items in series.values() for label, *_ in items)]
    return _png(texts, lambda: length_curves_figure(series, metric=metric, title=title))


def curves_figure(series: Mapping[str, list[tuple[float, float]]], *, xlabel: str, ylabel: str,
                  title: str, others: Mapping[str, Sequence[list[tuple[float, float]]]] | None
                  = None) -> Figure:
    """One line with markers per member through its (x, y) points in the given order, e.g.
    validation BLEU against updates; NaN y values leave gaps. others: member -> more runs of
    it (other seeds), each drawn as a thin faint line in the member's colour."""
    _check_members(series)
    figure, axes = _line_axes(list(series), title)
    for index, (member, points) in enumerate(series.items()):
        xs = [_number(x) for x, _ in points]
        _plot_member(axes, index, member, xs, [_number(y) for _, y in points])
        for run in (others or {}).get(member, []):
            axes.plot([_number(x) for x, _ in run], [_number(y) for _, y in run],
                      color=member_style(index)["color"], linewidth=0.8, alpha=0.35)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    _member_legend(figure, axes)
    return figure


def curves_png(series: dict[str, list[tuple[float, float]]], *, xlabel: str, ylabel: str,
               title: str, others: Mapping[str, Sequence[list[tuple[float, float]]]] | None
               = None) -> bytes:
    """curves_figure as PNG bytes."""
    return _png([*series, xlabel, ylabel, title],
                lambda: curves_figure(series, xlabel=xlabel, ylabel=ylabel, title=title,
                                      others=others))


def _value_text(value: float) -> str:
    """Three significant digits without exponent: 23.5, 0.312, 1234."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    return f"{value:.{max(0, 2 - math.floor(math.log10(abs(value))))}f}"


def _bar_limits(axes: Axes, numbers: list[float], references: Mapping[str, float]) -> None:
    """Room above the bars and lines for the value labels; zero always on the axis."""
    finite = [v for v in [*numbers, *references.values()] if np.isfinite(v)]
    low, high = min([0.0, *finite]), max([0.0, *finite])
    span = (high - low) or 1.0
    axes.set_ylim(low - (0.08 * span if low < 0 else 0), high + 0.12 * span)


def bars_figure(values: Mapping[str, float | None], *, ylabel: str, title: str,
                references: Mapping[str, float] | None = None,
                errors: Mapping[str, float] | None = None) -> Figure:
    """One bar per member, its value printed on it; a None (or NaN) member keeps its slot,
    marked "n/a". references: label -> value, horizontal dashed lines whose legend entry (below
    the axes) reads "label: value". errors: member -> a spread (e.g. the standard deviation
    over seeds), drawn as a whisker of +- that much and printed as "value ± spread"."""
    errors = dict(errors or {})
    _check_members(values)
    references = dict(references or {})
    members, numbers = list(values), [_number(value) for value in values.values()]
    width = min(WIDTH_INCHES, max(4.5, 2.0 + 0.75 * len(members)))
    figure = Figure(figsize=(width, 4.2 + 0.25 * len(references)), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)  # bars over the grid
    for index, number in enumerate(numbers):
        if np.isfinite(number):
            error = errors.get(members[index])
            bars = axes.bar([index], [number], width=0.65, color=member_style(index)["color"],
                            yerr=None if error is None else [error], capsize=4,
                            error_kw={"elinewidth": 1.2, "ecolor": "#333333"})
            shown = _value_text(number)
            decimals = len(shown.split(".")[1]) if "." in shown else 0
            label = shown if error is None else f"{shown}\n± {error:.{decimals}f}"
            axes.bar_label(bars, [label], fontsize=9 if error is None else 8, padding=2)
        else:
            axes.text(index, 0.02, "n/a", transform=axes.get_xaxis_transform(), ha="center",
                      va="bottom", fontsize=9, color="#666666", fontstyle="italic")
    for (label, value), (colour, dashes) in zip(references.items(),
                                                itertools.cycle(REFERENCE_STYLES), strict=False):
        axes.axhline(value, color=colour, linestyle=dashes, linewidth=1.3,
                     label=f"{label}: {_value_text(float(value))}")
    # Room for the whiskers and their two-line labels above the tallest bar.
    _bar_limits(axes, [n + 1.6 * errors.get(m, 0.0) for m, n in zip(members, numbers,
                                                                    strict=True)], references)
    if errors:
        low, high = axes.get_ylim()
        axes.set_ylim(low, high + 0.08 * (high - low))
    crowded = CHAR_INCHES * max(len(m) for m in members) > 0.9 * width / len(members)
    axes.set_xticks(range(len(members)), members, fontsize=9, rotation=30 if crowded else 0,
                    ha="right" if crowded else "center", rotation_mode="anchor")
    axes.set_xlim(-0.6, len(members) - 0.4)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=11)
    if references:
        figure.legend(loc="outside lower center", frameon=False, fontsize=9)
    return figure


def bars_png(values: dict[str, float | None], *, ylabel: str, title: str,
             references: dict[str, float] | None = None,
             errors: dict[str, float] | None = None) -> bytes:
    """bars_figure as PNG bytes."""
    texts = [*values, ylabel, title, *(references or {})]
    return _png(texts, lambda: bars_figure(values, ylabel=ylabel, title=title,
                                           references=references, errors=errors))


def heatmap_grid_png(panels: list[tuple[str, np.ndarray, list[str], list[str]]], *,
                     title: str, units: str = "words") -> bytes:
    """heatmap_grid_figure (one attention heatmap per member, same sentence) as PNG bytes."""
    texts = [title, *(text for label, _, source, target in panels
                      for text in (label, *source, *target))]
    return _png(texts, lambda: heatmap_grid_figure(panels, title=title, units=units))
