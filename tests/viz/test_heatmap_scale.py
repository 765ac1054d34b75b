"""Heatmaps too large for a screen are drawn smaller, never wider than MAX_PIXELS a side, and
say how: smaller cells, then no labels, then neighbouring cells averaged."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from attnlab.viz import heatmap_scale, matrix_figure, plot_alignment
from attnlab.viz.heatmap import CELL_PIXELS, MAX_PIXELS, shorten

MARGIN = 600  # labels and title beside the cells, in pixels


def test_full_size_up_to_250_cells_a_side():
    scale = heatmap_scale(250, 3)
    assert scale.note is None
    assert scale.rows.pixels == scale.cols.pixels == CELL_PIXELS
    assert scale.rows.labelled and scale.rows.block == 1


@pytest.mark.parametrize(("cells", "words"), [
    (400, "columns: 20 pixels each, labels in 9-point"),
    (1_000, "columns: 8.0 pixels each, no labels"),
    (20_000, "columns: 3 averaged into each pixel, no labels"),
])
def test_larger_sides_are_drawn_smaller_and_say_so(cells, words):
    scale = heatmap_scale(4, cells)
    assert scale.note == (f"the heatmap has 4 x {cells:,} cells, too many for 8,000 pixels a "
                          f"side, so it is drawn smaller ({words})")
    drawn = -(-cells // scale.cols.block)
    assert drawn * scale.cols.pixels <= MAX_PIXELS
    assert scale.rows.pixels == CELL_PIXELS and scale.rows.labelled


def test_a_very_long_sentence_gives_a_picture_a_screen_can_show(tmp_path):
    """The 300,000-pixel-wide PNG of a 10,000-word sentence is now at most 8,000 wide."""
    words = [f"word{i}" for i in range(10_000)]
    weights = np.random.default_rng(0).dirichlet(np.ones(len(words)), size=3)
    path = plot_alignment(weights, words, ["a", "b", "</s>"], tmp_path / "long.png",
                          title=" ".join(words))
    with Image.open(path) as image:
        assert image.width <= MAX_PIXELS + MARGIN and image.height <= 3 * CELL_PIXELS + MARGIN


def test_rows_and_columns_both_shrink(tmp_path):
    weights = np.random.default_rng(0).random((900, 1_200))
    figure = matrix_figure(weights, [str(i) for i in range(900)], [str(i) for i in range(1_200)])
    width, height = figure.get_size_inches() * figure.dpi
    assert width <= MAX_PIXELS + 1e-6 and height <= MAX_PIXELS + 1e-6
    axes = figure.axes[0]
    assert not axes.get_xticklabels() and not axes.get_yticklabels()


def test_long_labels_and_titles_are_cut():
    figure = matrix_figure(np.eye(2), ["x" * 1000, "y"], ["z", "w"], title="t" * 10_000)
    axes = figure.axes[0]
    assert axes.get_yticklabels()[0].get_text() == "x" * 29 + "…"
    assert len(axes.get_title()) == 120
    assert shorten("short", 30) == "short"


def average_loop(weights, block, axis):
    """The reference: each run of `block` neighbours (the last may be shorter) averaged."""
    weights = weights if axis == 1 else weights.T
    out = [[np.mean(row[start : start + block]) for start in range(0, len(row), block)]
           for row in weights]
    out = np.array(out)
    return out if axis == 1 else out.T


@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 7), st.integers(1, 7))
def test_averaging_matches_a_loop(rows, cols, row_block, col_block):
    weights = np.random.default_rng(rows * 31 + cols).random((rows, cols))
    scale = heatmap_scale(rows, cols)
    scale = type(scale)(type(scale.rows)(rows, row_block, 1.0),
                        type(scale.cols)(cols, col_block, 1.0))
    expected = average_loop(average_loop(weights, row_block, 0), col_block, 1)
    np.testing.assert_allclose(scale.reduce(weights), expected, rtol=1e-12)


@pytest.mark.parametrize(("rows", "cols"), [
    (37, 23), pytest.param(300, 40, marks=pytest.mark.slow), (5, 900)])
def test_bands_draw_exactly_what_one_image_draws(rows, cols, monkeypatch):
    """Large heatmaps are drawn in bands of rows (memory); the pixels are the same."""
    import attnlab.viz.heatmap as heatmap

    weights = np.random.default_rng(rows).random((rows, cols))
    labels = [str(i) for i in range(rows)], [str(i) for i in range(cols)]
    monkeypatch.setattr(heatmap, "TILE_PIXELS", 5_000)  # many bands, some one row high
    banded = heatmap.alignment_figure(weights, labels[1], labels[0])
    monkeypatch.setattr(heatmap, "TILE_PIXELS", 10**12)  # one image
    whole = heatmap.alignment_figure(weights, labels[1], labels[0])
    np.testing.assert_array_equal(banded, whole)


def test_data_range_colour_scale_is_the_whole_matrix(monkeypatch):
    import attnlab.viz.heatmap as heatmap

    monkeypatch.setattr(heatmap, "TILE_PIXELS", 2_000)
    weights = np.arange(12.0).reshape(4, 3) - 5
    figure = matrix_figure(weights, "abcd", "xyz", value_range=None, colorbar=True)
    assert {image.get_clim() for image in figure.axes[0].images} == {(-5.0, 6.0)}
