"""The HTML report is one self-contained, escaped file: results first, config folded last."""

import re

import numpy as np
import pytest
from PIL import Image

from attnlab.viz import plot_alignment, write_report
from attnlab.viz.report import Chart, Example, Result, chart_png, html_table


def test_report_is_self_contained_and_escaped(tmp_path):
    png = plot_alignment(np.eye(2), ["a", "b"], ["x", "y"], tmp_path / "heat.png")
    path = write_report(
        tmp_path / "out" / "report.html",
        title="Run <1> & co",
        lead="see https://example.org <b>bold</b>\nsecond line",
        results=[Result("Scores", [["metric", "score"], ["BLEU", "21.5"], ["<script>", "x"]]),
                 Result("BLEU by length <words>", [["words", "BLEU"], ["0-9", "1"]],
                        image=png.read_bytes(), caption="bars <x>")],
        examples=[Example([("source", "a <b>"), ("output", "x")], png, "alignment <de-en>"),
                  Example([("source", "c"), ("output", "z")])],
        charts=[Chart("Loss", {"training": [(0, 3.2), (100, 2.1)], "validation": [(100, 2.5)]}),
                Chart("BLEU", {"BLEU": [(100, 5.0), (200, 9.5)]})],
        config={"model": {"attention": {"score": "general", "window": 10}}, "lr": 0.001},
    )
    text = path.read_text(encoding="utf-8")
    # no resource is fetched from anywhere: every src/href is a data URI
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text)
    assert "<script" not in text and "<link" not in text
    sources = re.findall(r'<img src="([^"]*)"', text)
    assert len(sources) == 4 and all(s.startswith("data:image/png;base64,") for s in sources)
    # all text escaped
    assert "Run &lt;1&gt; &amp; co" in text and "&lt;script&gt;" in text
    assert "&lt;b&gt;bold&lt;/b&gt;" in text and "alignment &lt;de-en&gt;" in text
    assert 'id="bleu-by-length-words"' in text and "a &lt;b&gt;" in text
    assert "model.attention.score" in text and "general" in text


def test_results_then_samples_then_curves_then_folded_config(tmp_path):
    text = write_report(tmp_path / "r.html", title="t", results=[Result("Scores", [["a"]])],
                        examples=[Example([("source", "s")])],
                        charts=[Chart("Loss", {"training": [(0, 1.0)]})],
                        config={"lr": 0.1})
    text = text.read_text(encoding="utf-8")
    order = [text.index(marker) for marker in ('id="scores"', 'id="samples"',
                                               'id="training-curves"', "<details")]
    assert order == sorted(order)
    assert re.search(r"<details[^>]*><summary>Configuration \(1 settings\)</summary>", text)


def test_numbers_are_right_aligned_labels_are_not():
    table = html_table([["label", "value"], ["0-9", "1,014"], ["50+", "-"], ["x", "-0.5"]])
    cells = re.findall(r'<td( class="num")?>([^<]*)</td>', table)
    assert {text: bool(css) for css, text in cells} == {
        "0-9": False, "1,014": True, "50+": False, "-": False, "x": False, "-0.5": True}


@pytest.mark.parametrize("points", [1, 3, 500])
def test_chart_is_a_png_of_lines_with_markers(points, tmp_path):
    series = {"training": [(step, 1.0 / (step + 1)) for step in range(points)],
              "validation": [(0, 0.5)]}
    png = chart_png(Chart("Loss", series, "loss"))
    (tmp_path / "c.png").write_bytes(png)
    with Image.open(tmp_path / "c.png") as image:
        assert image.format == "PNG" and 400 < image.width < 600


def test_a_long_word_may_wrap_so_a_table_fits_a_phone(tmp_path):
    """A sacreBLEU signature is one word of 60 characters: without a place to wrap, a phone
    shows the scores table cut after its first columns."""
    signature = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    table = html_table([["metric", "score", "signature"], ["BLEU", "21.50", signature],
                        ["chrF", "50.1", "a few short words"]])
    assert f'<td class="long">{signature}</td>' in table  # its text as it was: copyable
    assert "<td>a few short words</td>" in table and '<td class="num">21.50</td>' in table
    text = write_report(tmp_path / "r.html", title="t").read_text(encoding="utf-8")
    assert re.search(r"td\.long \{ overflow-wrap: anywhere; \}", text)
