"""The HTML report is one self-contained, escaped file."""

import re

import numpy as np

from attnlab.viz import plot_alignment, write_report


def test_report_is_self_contained_and_escaped(tmp_path):
    png = plot_alignment(np.eye(2), ["a", "b"], ["x", "y"], tmp_path / "heat.png")
    path = write_report(
        tmp_path / "out" / "report.html",
        title="Run <1> & co",
        config={"model": {"attention": {"score": "general", "window": 10}}, "lr": 0.001},
        curves={"loss": [(0, 3.2), (100, 2.1), (200, 1.7)], "bleu": [(100, 5.0), (200, 9.5)]},
        tables={"BLEU by length": [["words", "BLEU"], ["0-9", "21.5"], ["<script>", "x"]]},
        images={"alignment <de-en>": png, "raw bytes": png.read_bytes()},
        notes="see https://example.org <b>bold</b>",
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
    assert "model.attention.score" in text and "general" in text
