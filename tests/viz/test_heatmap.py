"""Alignment heatmaps and weight matrices: files written, sizes right, labels' glyphs available."""

import warnings

import numpy as np
import pytest
from PIL import Image

from attnlab.viz import (
    alignment_figure,
    alignment_matrix_figure,
    find_cjk_family,
    font_families,
    fonts,
    matrix_figure,
    missing_glyphs,
    plot_alignment,
    plot_weight_matrix,
)
from attnlab.viz.heatmap import CELL_INCHES, DPI

GERMAN = "Zwei Männer spielen Fußball .".split()
ENGLISH = "Two men are playing soccer .".split()
CHINESE = ["2024年", "3月", "5日", "星期二"]


def weights(rows, cols, seed=0):
    return np.random.default_rng(seed).dirichlet(np.ones(cols), size=rows)


def test_plot_alignment_writes_png_growing_with_tokens(tmp_path):
    short = plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / "a.png", title="de→en")
    long = plot_alignment(weights(6, 10), GERMAN * 2, ENGLISH, tmp_path / "b.png", title="x")
    assert short == tmp_path / "a.png" and short.stat().st_size > 1000
    with Image.open(short) as a, Image.open(long) as b:
        assert a.format == "PNG" and b.height == a.height
        # one fixed-size cell per source word: 5 more words, 5 more cells of width
        assert b.width - a.width == pytest.approx(5 * CELL_INCHES * DPI, abs=40)


@pytest.mark.parametrize("suffix", [".svg", ".pdf"])
def test_vector_formats_by_suffix(tmp_path, suffix):
    path = plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / f"a{suffix}")
    head = path.read_bytes()[:200]
    assert (b"<svg" in head) if suffix == ".svg" else head.startswith(b"%PDF")


def test_bad_suffix_and_shape_are_errors(tmp_path):
    with pytest.raises(ValueError, match="use .png, .svg or .pdf"):
        plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / "a.bmp")
    with pytest.raises(ValueError, match=r"shape \(5, 5\) but there are 6 row labels"):
        plot_alignment(weights(5, 5), GERMAN, ENGLISH, tmp_path / "a.png")
    with pytest.raises(ValueError, match="nothing to draw"):
        plot_alignment(np.zeros((0, 0)), [], [], tmp_path / "a.png")


def test_source_words_on_top_target_words_left():
    figure = matrix_figure(weights(6, 5), ENGLISH, GERMAN)
    axes = figure.axes[0]
    assert [label.get_text() for label in axes.get_xticklabels()] == GERMAN
    assert [label.get_text() for label in axes.get_yticklabels()] == ENGLISH
    assert axes.xaxis.get_ticks_position() == "top"


def test_alignment_figure_matches_png(tmp_path):
    pixels = alignment_figure(weights(6, 5), GERMAN, ENGLISH)
    assert pixels.dtype == np.uint8 and pixels.ndim == 3 and pixels.shape[2] == 3
    assert pixels.min() < 50 and pixels.max() > 200  # drawn, not blank
    path = plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / "a.png")
    with Image.open(path) as image:
        assert pixels.shape[:2] == (image.height, image.width)


def test_weight_matrix_has_colorbar(tmp_path):
    matrix = np.arange(6.0).reshape(2, 3) - 2
    path = plot_weight_matrix(matrix, ["r1", "r2"], "abc", tmp_path / "m.png")
    assert path.stat().st_size > 1000
    assert len(matrix_figure(np.eye(2), "ab", "cd", colorbar=True).axes) == 2


def test_alignment_has_a_colour_bar_and_named_axes():
    figure = alignment_matrix_figure(weights(6, 5), GERMAN, ENGLISH,
                                     axis_names=("source words", "output words"))
    cells, bar = figure.axes
    assert cells.get_xlabel() == "source words" and cells.get_ylabel() == "output words"
    assert cells.xaxis.get_label_position() == "top"
    assert bar.get_ylim() == (0.0, 1.0)  # the colour bar spans the weights' range


def test_a_long_title_wraps_instead_of_widening(tmp_path):
    """The title (sentence and translation) wraps at about the heatmap's width: the figure is
    no wider than with a short title, and the title's lines are kept whole."""
    sentence = " ".join(GERMAN * 3)
    short = plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / "a.png", title="x")
    long = plot_alignment(weights(6, 5), GERMAN, ENGLISH, tmp_path / "b.png",
                          title=f"{sentence}\n-> {' '.join(ENGLISH)}")
    with Image.open(short) as a, Image.open(long) as b:
        assert b.width <= a.width + 2 * 40 and b.height > a.height
    title = matrix_figure(weights(6, 5), ENGLISH, GERMAN, title=sentence).axes[0].get_title()
    assert title.replace("\n", " ") == sentence and title.count("\n") >= 1


def test_umlauts_render_with_bundled_font_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        families = font_families(GERMAN + ["ß", "Größe"])
    assert families == [fonts.BASE_FAMILY]
    assert missing_glyphs(GERMAN + ["Größe"], families) == set()


@pytest.mark.skipif(
    find_cjk_family() is None,
    reason="no CJK font installed (Debian package fonts-noto-cjk); CJK glyph check skipped",
)
def test_chinese_labels_get_a_cjk_fallback_font(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        families = font_families(CHINESE + ENGLISH)
        plot_alignment(weights(4, 4), CHINESE, ENGLISH[:4], tmp_path / "zh.png", title="日期")
    assert families[0] == fonts.BASE_FAMILY and families[1] == find_cjk_family()
    assert missing_glyphs(CHINESE, families) == set()


def test_missing_cjk_font_warns_once(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_family", lambda: None)
    monkeypatch.setattr(fonts, "_warned", False)
    with pytest.warns(UserWarning, match="fonts-noto-cjk") as record:
        font_families(CHINESE)
    assert "boxes" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert font_families(CHINESE)[0] == fonts.BASE_FAMILY  # second time: silent


def test_font_path_is_used_as_fallback(tmp_path):
    import matplotlib.font_manager as font_manager

    dejavu = font_manager.findfont("DejaVu Serif", fallback_to_default=False)
    assert font_families(["x"], font_path=dejavu) == [fonts.BASE_FAMILY, "DejaVu Serif"]
    with pytest.raises(FileNotFoundError):
        font_families(["x"], font_path=tmp_path / "none.ttf")


@pytest.mark.skipif(
    find_cjk_family() is None,
    reason="no CJK font installed (Debian package fonts-noto-cjk); rescan check skipped",
)
def test_cjk_font_installed_after_matplotlib_cached_its_font_list(monkeypatch):
    import matplotlib.font_manager as font_manager

    manager = font_manager.fontManager
    stale = [entry for entry in manager.ttflist if entry.name not in fonts.CJK_FAMILIES]
    monkeypatch.setattr(manager, "ttflist", stale)  # as if the cache predates the install
    fonts.find_cjk_family.cache_clear()
    try:
        assert fonts.find_cjk_family() in fonts.CJK_FAMILIES
    finally:
        fonts.find_cjk_family.cache_clear()
