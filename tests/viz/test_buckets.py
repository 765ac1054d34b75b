"""BLEU-by-length bars from plain numbers: a PNG, empty buckets left out, room for the counts."""

import io

import pytest
from PIL import Image

from attnlab.viz import bleu_by_length_figure, bleu_by_length_png
from attnlab.viz.buckets import worth_a_chart

LABELS = ["0-9", "10-19", "20-29", "30+"]
COUNTS = [12, 40, 0, 7]
BLEU = [31.5, 24.25, None, 12.0]


def test_png_of_the_bars():
    png = bleu_by_length_png(LABELS, COUNTS, BLEU, title="de→en")
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG" and image.width > image.height > 100


def test_empty_buckets_are_left_out_and_counts_shown():
    axes, = bleu_by_length_figure(LABELS, COUNTS, BLEU).axes
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["0-9", "10-19", "30+"]
    assert [text.get_text() for text in axes.texts] == ["n=12", "n=40", "n=7"]
    assert [bar.get_height() for bar in axes.patches] == [31.5, 24.25, 12.0]
    assert axes.get_ylim()[1] == pytest.approx(60 * 1.08)


def test_high_bleu_raises_the_axis_to_100():
    axes, = bleu_by_length_figure(["0-1", "2+"], [5, 95], [88.0, 64.0]).axes
    assert axes.get_ylim()[1] == pytest.approx(100 * 1.08)


def test_every_bucket_needs_a_label_count_and_bleu():
    with pytest.raises(ValueError, match="one of each per bucket"):
        bleu_by_length_png(["0-9"], [1, 2], [3.0])


def test_one_bucket_is_a_bar_as_wide_as_among_three():
    axes, = bleu_by_length_figure(["0-9"], [20], [1.87]).axes
    bar, = axes.patches
    low, high = axes.get_xlim()
    assert bar.get_width() / (high - low) == pytest.approx(0.6 / 3)
    assert (low + high) / 2 == pytest.approx(0.0)  # centred


def test_a_chart_needs_two_bars_to_compare():
    assert worth_a_chart(BLEU) and worth_a_chart([None, 3.0, 0.0])
    assert not worth_a_chart([12.5, None, None, None, None, None]) and not worth_a_chart([])
