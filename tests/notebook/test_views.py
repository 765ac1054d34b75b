"""Every result draws as the explorer's view: self-contained HTML (the page's code inlined, no
URL to fetch), a plain table for a console, the page's figure as SVG and PNG, its weights."""

import json
import re

import numpy as np
import pytest

import attnlab
from attnlab.viz import SentenceReading, token_label
from attnlab.viz.notebook import View, view_of
from attnlab.viz.notebook.assets import bundle, css

from .conftest import DATE

URL = re.compile(r"https?://")


def payload_of(html: str) -> str:
    return re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)[1]


def external_sources(html: str) -> list[str]:
    """src= or href= attributes, CSS url() and @import that name an http(s) address."""
    return re.findall(
        r"""(?:src|href)\s*=\s*["']?https?://[^"' >]*|url\(\s*["']?https?://"""
        r"""|@import\s+["']?https?://""",
        html,
    )


def test_the_bundle_is_the_pages_own_modules():
    code = bundle()
    for module in (
        "heatmap.js",
        "translation-view.js",
        "caption-view.js",
        "reading-view.js",
        "svg.js",
        "colour.js",
        "download.js",
        "notebook.js",
    ):
        assert f'modules["{module}"] = ' in code
    assert "import {" not in code and "\nexport " not in code
    assert ":root" not in css() and ":host" in css()


def test_the_bundle_refuses_an_import_form_it_does_not_read(tmp_path, monkeypatch):
    from attnlab.viz.notebook import assets

    (tmp_path / "notebook.js").write_text('import thing from "./x.js";\n')
    monkeypatch.setattr(assets, "STATIC", tmp_path)
    assets.bundle.cache_clear()
    try:
        with pytest.raises(ValueError, match="notebook.js:1"):
            assets.bundle()
    finally:
        assets.bundle.cache_clear()


def test_a_character_model_starts_at_its_characters(translation):
    view = view_of(translation)
    levels = view.payload["levels"]
    assert [(level["value"], level["name"]) for level in levels] == [
        ("piece", "characters"),
        ("word", "words"),
    ]
    best = levels[0]["hypotheses"][0]
    assert best["source_tokens"] == translation.source_pieces
    assert len(levels[0]["hypotheses"]) == len(translation.hypotheses) == 3
    np.testing.assert_allclose(best["attention"], translation.weights, atol=1e-5)
    assert translation.weights is translation.attention
    words = levels[1]["hypotheses"][0]
    assert words["source_tokens"] == translation.source_words


def test_the_html_is_self_contained(translation):
    html = translation._repr_html_()
    assert 'modules["heatmap.js"]' in html  # the page's heatmap, not a copy
    assert external_sources(html) == []
    assert not URL.search(payload_of(html))
    assert "<img alt=" in html  # the static figure for where scripts do not run
    bundle_ = translation._repr_mimebundle_()
    assert set(bundle_) == {"text/html", "text/plain"}


def test_two_views_have_their_own_ids(translation):
    first, second = translation._repr_html_(), translation._repr_html_()
    host = re.compile(r'<div id="(attnlab-[0-9a-f]+)"')
    assert host.search(first)[1] != host.search(second)[1]


def test_repr_is_a_plain_table(translation):
    text = repr(translation)
    lines = text.splitlines()
    assert DATE in lines[0] and translation.text in lines[0] and "characters" in lines[0]
    header = lines[1].split()
    assert header[:3] == [token_label(t) for t in translation.source_pieces[:3]]
    assert all(len(line) <= 100 for line in lines)
    assert f"2. {translation.alternatives[0].text}" in text


def test_svg_and_png_are_the_pages_figure(translation, tmp_path):
    svg = translation.to_svg()
    assert svg.startswith("<?xml") and "<svg" in svg and 'class="heatmap"' in svg
    for token in translation.target_pieces:
        assert f">{token_label(token).replace('<', '&lt;').replace('>', '&gt;')}<" in svg
    png = translation.save_png(tmp_path / "view.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = translation.save_html(tmp_path / "view.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and external_sources(page) == []


def test_a_caption_view_has_the_image_it_saw(caption):
    view = view_of(caption)
    answer = view.payload["answer"]
    assert answer["tokens"] == caption.words
    assert answer["image"].startswith("data:image/png;base64,")
    assert caption.image.shape == (32, 32, 3)
    assert caption.weights.shape == (len(caption.words), *answer["grid"])
    svg = caption.to_svg()
    assert svg.count('class="veil"') == len(caption.words)


def test_a_reading_view_shows_the_top_layer(reading):
    view = view_of(reading)
    np.testing.assert_allclose(view.payload["answer"]["weights"], reading.weights[-1], atol=1e-5)
    assert 'class="reading"' in reading.to_svg()
    assert repr(reading).startswith("Reading “the cat sees the dog .”")


def test_side_by_side_and_lists(translation, caption, reading):
    pair = view_of({"beam 3": translation, "again": translation})
    assert pair.payload["kind"] == "compare" and len(pair.payload["entries"]) == 2
    assert "<svg" in pair.to_svg()
    several = view_of([translation, caption, reading])
    assert [part["kind"] for part in several.payload["views"]] == [
        "translation",
        "caption",
        "reading",
    ]
    assert several.to_svg().count('class="heatmap"') == 2  # the translation's, the reading's


def test_labelled_results_of_any_kind_show_under_their_labels(caption, reading):
    labelled = view_of({"soft": caption, "reader": reading})
    titles = [part["title"] for part in labelled.payload["views"]]
    assert titles[0].startswith("soft: “") and titles[1].startswith("reader: Reading")
    assert labelled.to_svg().count('class="veil"') == len(caption.words)


def test_a_suite_s_records_show_as_a_table_and_examples():
    example = {
        "source": "3 May",
        "translation": "05-03",
        "source_tokens": ["3", "M", "</s>"],
        "target_tokens": ["0", "5", "</s>"],
        "weights": np.eye(3).tolist(),
    }
    records = [
        {
            "name": "bahdanau",
            "label": "Bahdanau",
            "updates": 100,
            "scores": {"bleu": 50.0, "aer": 0.2},
            "spread": {"bleu": 1.5},
            "example": example,
        },
        {
            "name": "none",
            "label": "no attention",
            "updates": 100,
            "scores": {"bleu": 10.0, "aer": None},
            "example": {"weights": None},
        },
    ]
    view = view_of(records)
    assert view.payload["table"]["columns"] == ["member", "updates", "bleu", "aer"]
    assert view.payload["table"]["rows"][0] == ["Bahdanau", "100", "50 ± 1.5", "0.2"]
    assert view.payload["entries"][1]["hypothesis"] is None
    assert "Bahdanau" in repr(view)


def test_show_prints_the_table_outside_a_notebook(translation, capsys):
    attnlab.show(translation)
    assert capsys.readouterr().out.strip() == repr(translation)
    with pytest.raises(TypeError, match="nothing to show for int"):
        attnlab.show(3)


def test_a_view_is_a_view_of_itself():
    reading = SentenceReading(["<s>", "a"], np.zeros((1, 2, 2)))
    view = view_of(reading)
    assert isinstance(view, View) and view_of(view) is view


@pytest.mark.parametrize("token", [" ", "▁", "  ", "\t", "", "▁Fuß", "a", "</s>", "x" * 30])
def test_the_page_and_python_label_tokens_alike(token):
    from attnlab.viz.notebook import assets, draw

    _, body = assets._module("svg.js", (assets.STATIC / "svg.js").read_text(encoding="utf-8"))
    racer = draw._racer()
    shown = racer.eval(f"(() => {{ {body} }})().label({json.dumps(token)}, 100)")
    assert shown == token_label(token)
