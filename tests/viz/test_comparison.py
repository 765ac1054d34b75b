"""Figures comparing a suite's members: valid PNGs a report column wide, one colour per member
everywhere, gaps for missing values, and attention panels that never overlap."""

import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from PIL import Image

from attnlab.viz.comparison import (
    PALETTE,
    bars_figure,
    bars_png,
    curves_figure,
    curves_png,
    heatmap_grid_png,
    length_curves_figure,
    length_curves_png,
)
from attnlab.viz.comparison_grid import MIN_FONT, grid_layout, heatmap_grid_figure

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MEMBERS = ["no attention", "Bahdanau (additive)", "Luong dot", "Luong general", "Luong concat",
           "Luong location", "local-m", "local-p"]
BUCKETS = [("0-9", 406), ("10-19", 1210), ("20-29", 980), ("30+", 64)]
SOURCE = "Ein Mann mit Sonnenbrille spielt am Strand mit seinem Hund Fußball .".split()
TARGET = "A man with sunglasses plays soccer on the beach with his dog .".split()


def image(png: bytes) -> Image.Image:
    assert png.startswith(PNG_SIGNATURE)
    decoded = Image.open(io.BytesIO(png))
    decoded.load()
    assert decoded.format == "PNG"
    return decoded


def length_series(members, seed=0):
    rng = np.random.default_rng(seed)
    return {m: [(b, float(rng.uniform(5, 30)), n) for b, n in BUCKETS] for m in members}


def weights(rows, cols, seed=0):
    return np.random.default_rng(seed).dirichlet(np.ones(cols), size=rows)


def panels(count, source=SOURCE, target=TARGET):
    return [(MEMBERS[i % len(MEMBERS)], weights(len(target), len(source), i), source, target)
            for i in range(count)]


@pytest.mark.slow
def test_every_function_returns_a_png_about_a_report_column_wide():
    pngs = [
        length_curves_png(length_series(MEMBERS), title="BLEU by length"),
        curves_png({m: [(1.0, 2.0), (2.0, 3.5)] for m in MEMBERS}, xlabel="minutes",
                   ylabel="BLEU", title="validation"),
        bars_png(dict.fromkeys(MEMBERS, 0.4), ylabel="AER", title="AER"),
        heatmap_grid_png(panels(8), title="one sentence"),
    ]
    for png in pngs:
        assert 600 < image(png).width < 960


def test_length_ticks_show_buckets_in_first_seen_order_with_their_counts():
    series = {"a": [("10-19", 20.0, 1210), ("0-9", 25.0, 406)],
              "b": [("0-9", 24.0, 406), ("20+", 12.0, 64)]}
    axes = length_curves_figure(series, title="t").axes[0]
    ticks = [tick.get_text() for tick in axes.get_xticklabels()]
    assert ticks == ["10-19\n(1,210)", "0-9\n(406)", "20+\n(64)"]
    line_a, line_b = axes.lines
    # a member without a bucket has a gap there, not a zero
    np.testing.assert_array_equal(line_a.get_ydata(), [20.0, 25.0, np.nan])
    np.testing.assert_array_equal(line_b.get_ydata(), [np.nan, 24.0, 12.0])


def test_nan_and_none_values_leave_gaps_and_an_empty_member_says_so():
    series = {"a": [("0-9", math.nan, 5), ("10-19", 20.0, 7)],
              "b": [("0-9", None, 5), ("10-19", None, 7)]}
    axes = length_curves_figure(series, title="t").axes[0]
    assert np.isnan(axes.lines[0].get_ydata()[0]) and axes.lines[0].get_ydata()[1] == 20.0
    assert [line.get_label() for line in axes.lines] == ["a", "b (no data)"]
    curves = curves_figure({"a": [(0.0, 1.0), (1.0, math.nan), (2.0, 3.0)], "b": []},
                           xlabel="minutes", ylabel="BLEU", title="t").axes[0]
    assert np.isnan(curves.lines[0].get_ydata()[1])
    assert curves.lines[1].get_label() == "b (no data)"


def test_members_disagreeing_on_a_bucket_count_show_the_range():
    series = {"a": [("0-9", 20.0, 400)], "b": [("0-9", 21.0, 406)]}
    axes = length_curves_figure(series, title="t").axes[0]
    assert axes.get_xticklabels()[0].get_text() == "0-9\n(400–406)"


def test_a_member_has_the_same_colour_in_every_figure():
    lines = length_curves_figure(length_series(MEMBERS), title="t").axes[0].lines
    curves = curves_figure({m: [(0.0, 1.0)] for m in MEMBERS}, xlabel="x", ylabel="y",
                           title="t").axes[0].lines
    bars = bars_figure(dict.fromkeys(MEMBERS, 1.0), ylabel="y", title="t").axes[0].patches
    for index in range(len(MEMBERS)):
        expected = to_rgba(PALETTE[index])
        assert to_rgba(lines[index].get_color()) == expected
        assert to_rgba(curves[index].get_color()) == expected
        assert bars[index].get_facecolor() == expected
    assert len({to_rgba(line.get_color()) for line in lines}) == len(MEMBERS)


@pytest.mark.parametrize("count", [5, 8])
def test_the_legend_reads_in_member_order_row_by_row(count):
    figure = length_curves_figure(length_series(MEMBERS[:count]), title="t")
    FigureCanvasAgg(figure).draw()
    texts = figure.legends[0].get_texts()
    boxes = [text.get_window_extent() for text in texts]
    # row by row: sort the drawn labels top to bottom, then left to right
    order = sorted(range(len(texts)), key=lambda i: (-round(boxes[i].y0), boxes[i].x0))
    assert [texts[i].get_text() for i in order] == MEMBERS[:count]


def test_more_members_make_a_taller_legend():
    few = image(length_curves_png(length_series(MEMBERS[:2]), title="t"))
    many = image(length_curves_png(length_series(MEMBERS), title="t"))
    assert many.height > few.height and many.width == pytest.approx(few.width, abs=30)


def test_bars_print_values_mark_missing_members_and_draw_references():
    values = {"no attention": None, "Bahdanau (additive)": 0.412, "local-p": math.nan}
    references = {"eflomal (statistical aligner)": 0.31, "Luong et al. 2015 (WMT)": 0.39}
    figure = bars_figure(values, ylabel="AER", title="t", references=references)
    axes = figure.axes[0]
    assert [bar.get_height() for bar in axes.patches] == [0.412]
    assert sorted(text.get_text() for text in axes.texts) == ["0.412", "n/a", "n/a"]
    assert [line.get_ydata()[0] for line in axes.lines] == [0.31, 0.39]
    assert all(line.get_linestyle() != "-" for line in axes.lines)
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend == ["eflomal (statistical aligner): 0.310", "Luong et al. 2015 (WMT): 0.390"]
    assert axes.get_ylim()[1] > 0.412  # room above the tallest bar for its label


def test_more_bars_make_a_wider_figure():
    few = image(bars_png(dict.fromkeys(MEMBERS[:3], 20.0), ylabel="BLEU", title="t"))
    many = image(bars_png(dict.fromkeys(MEMBERS, 20.0), ylabel="BLEU", title="t"))
    assert many.width > few.width


def test_nothing_to_draw_is_an_error():
    with pytest.raises(ValueError, match="no members"):
        length_curves_png({}, title="t")
    with pytest.raises(ValueError, match="no members"):
        bars_png({}, ylabel="y", title="t")
    with pytest.raises(ValueError, match="no panels"):
        heatmap_grid_png([], title="t")


def test_a_mismatched_panel_names_its_member():
    rows, cols = len(TARGET), len(SOURCE)
    bad = [*panels(2), ("Luong dot", weights(rows - 1, cols), SOURCE, TARGET)]
    with pytest.raises(ValueError, match=rf"panel 'Luong dot': weights have shape \({rows - 1}, "
                                         rf"{cols}\).*should be \({rows}, {cols}\)"):
        heatmap_grid_png(bad, title="t")
    with pytest.raises(ValueError, match=f"panel 'local-p'.* {rows} target and 3 source tokens"):
        heatmap_grid_png([("local-p", weights(rows, cols), SOURCE[:3], TARGET)], title="t")


def test_panels_share_one_scale_and_one_colour_bar():
    short = [(label, w[:-2], source, target[:-2]) for label, w, source, target in panels(3)]
    figure = heatmap_grid_figure([*panels(2), *short], title="t")
    *panel_axes, bar = figure.axes
    assert [axes.get_title() for axes in panel_axes] == [label for label, *_ in
                                                         [*panels(2), *short]]
    assert all(axes.images[0].get_clim() == (0.0, 1.0) for axes in panel_axes)
    assert bar.get_ylabel() == "attention weight (0 to 1)"
    heights = {round(axes.get_position().height * figure.get_figheight(), 6)
               for axes in panel_axes}
    assert len(heights) == 2  # the same cell size for every member's translation


@pytest.mark.slow
def test_more_panels_make_the_grid_grow():
    one, three, six = (image(heatmap_grid_png(panels(n), title="t")) for n in (1, 3, 6))
    assert three.width > one.width
    assert six.height > three.height and six.width == three.width


@pytest.mark.slow
def test_a_long_sentence_gets_its_own_column_with_readable_labels():
    source = [f"Wort{i}" for i in range(45)]
    target = [f"word{i}" for i in range(48)]
    figure = heatmap_grid_figure(panels(3, source, target), title="t")
    layout = grid_layout([source] * 3, [target] * 3)
    assert layout.columns == 1 and layout.font >= 7
    labels = figure.axes[0].get_xticklabels()
    assert len(labels) == 45 and labels[0].get_fontsize() >= 7
    assert image(heatmap_grid_png(panels(3, source, target), title="t")).width < 1000


def test_a_very_long_sentence_loses_its_labels_not_its_panels():
    source, target = [f"w{i}" for i in range(300)], [f"v{i}" for i in range(300)]
    layout = grid_layout([source], [target])
    assert layout.font < MIN_FONT and not layout.labelled
    figure = heatmap_grid_figure(panels(1, source, target), title="t")
    assert figure.axes[0].get_xticks().size == 0 and max(figure.get_size_inches()) < 16


@pytest.mark.slow
@settings(max_examples=10)
@given(st.lists(st.tuples(st.integers(1, 7), st.integers(1, 7)), min_size=1, max_size=5),
       st.integers(1, 7))
def test_random_panels_draw_without_overlapping(shapes, source_len):
    source = [f"Quelle{i}" for i in range(source_len)]
    drawn = [(f"member {i}", weights(rows, source_len, i), source, [f"t{j}" for j in range(rows)])
             for i, (rows, _) in enumerate(shapes)]
    figure = heatmap_grid_figure(drawn, title="random")
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [axes.get_tightbbox(renderer) for axes in figure.axes[:-1]]  # labels and title too
    for i, first in enumerate(boxes):
        for second in boxes[i + 1:]:
            assert not first.overlaps(second)
    assert image(heatmap_grid_png(drawn, title="random")).height > 100
