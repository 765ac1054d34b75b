"""BLEU by source length as bars: the analogue of Bahdanau et al. 2015, Fig. 2.

Plain numbers in (bucket labels, sentence counts, BLEU values), a Figure or PNG bytes out. Built
with matplotlib's object API and the Agg canvas, never pyplot, as in attnlab.viz.heatmap.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

BAR_COLOUR = "#4c78a8"
LINE_COLOUR = "#e45756"
MIN_BARS = 2  # a chart of one bar compares nothing: a report shows its table alone


def worth_a_chart(bleu: Sequence[float | None]) -> bool:
    """Whether the buckets (BLEU per bucket, None for an empty one) make a chart worth
    drawing: MIN_BARS or more non-empty buckets."""
    return sum(value is not None for value in bleu) >= MIN_BARS


def bleu_by_length_figure(labels: Sequence[str], counts: Sequence[int],
                          bleu: Sequence[float | None], *,
                          title: str = "BLEU by source length") -> Figure:
    """Bars of corpus BLEU per source-length bucket, "n=<count>" above each bar.

    labels, counts, bleu: one entry per bucket (e.g. "10-19", 40, 21.5); a bucket whose BLEU is
    None (no sentences) is left out. The y axis runs to 60, or to 100 when a bucket is above 60.
    """
    if not len(labels) == len(counts) == len(bleu):
        raise ValueError(f"{len(labels)} labels, {len(counts)} counts and {len(bleu)} BLEU values:"
                         f" one of each per bucket")
    kept = [(label, count, value) for label, count, value in zip(labels, counts, bleu,
                                                                  strict=True) if value is not None]
    slots = max(len(kept), 3)  # a few buckets keep the width of three, centred
    figure = Figure(figsize=(1.2 + 0.9 * slots, 3.2), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = range(len(kept))
    values = [value for _, _, value in kept]
    bars = axes.bar(positions, values, color=BAR_COLOUR, width=0.6)
    axes.plot(positions, values, color=LINE_COLOUR, marker="o")
    axes.bar_label(bars, [f"n={count}" for _, count, _ in kept], fontsize=8, padding=2)
    axes.set_xticks(list(positions), [label for label, _, _ in kept])
    axes.set_xlabel("source sentence length (words)")
    axes.set_ylabel("BLEU")
    top = 100.0 if any(value > 60 for value in values) else 60.0  # room for the count labels
    axes.set_ylim(0, top * 1.08)
    margin = (slots - len(kept)) / 2 + 0.5
    axes.set_xlim(-margin, len(kept) - 1 + margin)
    axes.set_title(title, fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    return figure


def bleu_by_length_png(labels: Sequence[str], counts: Sequence[int],
                       bleu: Sequence[float | None], *,
                       title: str = "BLEU by source length") -> bytes:
    """The bleu_by_length_figure as PNG bytes (cropped to its contents), e.g. for a report."""
    figure = bleu_by_length_figure(labels, counts, bleu, title=title)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()
