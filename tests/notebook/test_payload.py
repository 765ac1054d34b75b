"""A view's embedded data survives any text, and its size is bounded whatever the input's
length (a long input is drawn smaller, saying so). Made-up translations: no model to train."""

import json
import re
from types import SimpleNamespace

import numpy as np
import pytest

from attnlab.viz.notebook import compare_view, translation_view
from attnlab.viz.notebook.draw import MAX_PNG_PIXELS, svg_size
from attnlab.viz.notebook.shrink import MAX_CELLS, MAX_SIDE, shrink

HOSTILE = ["<!--", "</script>", "<script>", "]]>", "\u2028", "\u2029", "-->", "&amp;", "</SCRIPT "]


def translation(source: list[str], target: list[str], text: str | None = None, seed: int = 0):
    """A made-up character translation: its pieces, words and a row-stochastic attention."""
    rng = np.random.default_rng(seed)
    weights = rng.random((len(target), len(source))) ** 8
    weights /= weights.sum(axis=1, keepdims=True)
    return SimpleNamespace(
        text=text if text is not None else "".join(target[:-1]), score=-1.0,
        source_pieces=source, target_pieces=target, attention=weights,
        source_words=["".join(source[:-1]), "</s>"], target_words=["".join(target[:-1]), "</s>"],
        word_attention=np.array([[0.9, 0.1], [0.2, 0.8]]),
    )


def embedded(html: str) -> str:
    """The text of the view's data element, as a browser's HTML parser ends it: at the first
    "</script" (any case)."""
    start = re.search(r'<script type="application/json"[^>]*>', html).end()
    return html[start : start + re.search(r"</script", html[start:], re.I).start()]


def test_the_embedded_data_survives_any_text():
    chars = [*"".join(HOSTILE), "</s>"]
    view = translation_view([translation(chars, [*HOSTILE, "</s>"], text="".join(HOSTILE))],
                            "char", name="<!-- </script>")
    html = view._repr_html_()
    data = embedded(html)
    # nothing in it an HTML parser reads as markup, nor a line end JavaScript reads
    assert not set(data) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(data) == json.loads(json.dumps(view.payload))
    assert json.loads(data)["levels"][0]["hypotheses"][0]["tokens"][:len(HOSTILE)] == HOSTILE


def test_side_by_side_data_survives_any_text_too():
    chars = [*"<!--</script>", "</s>"]
    view = compare_view({label: translation(chars, chars) for label in ("<!-- a", "b</script>")})
    data = embedded(view._repr_html_())
    assert json.loads(data) == json.loads(json.dumps(view.payload))


def drawn_cells(payload: dict) -> list[tuple[int, int]]:
    return [(len(h["attention"]), len(h["attention"][0]))
            for level in payload["levels"] for h in level["hypotheses"]]


def test_a_5000_character_input_is_drawn_smaller_and_says_so():
    source = [*("le 14 juillet 1789, " * 250)[:5000], "</s>"]
    target = [*"1789-07-14", "</s>"]
    long = translation(source, target)
    view = translation_view([long], "char")
    for rows, cols in drawn_cells(view.payload):
        assert rows <= MAX_SIDE and cols <= MAX_SIDE and rows * cols <= MAX_CELLS
    level = view.payload["levels"][0]
    best = level["hypotheses"][0]
    assert best["tokens"] == target  # 11 rows: not merged
    assert len(best["source_tokens"]) == len(best["attention"][0]) == 239  # 21 each
    assert best["source_tokens"][0] == "le 14 juillet 1789, l"
    np.testing.assert_allclose(np.sum(best["attention"], axis=1), 1.0, atol=1e-3)
    assert level["note"].startswith("The 5,001 characters it read are drawn 21 to a column")
    assert view.weights.shape == (11, 5001)  # every weight is kept
    assert len(view.payload["title"]) < 200
    html = view._repr_html_()
    assert len(html) < 1_500_000  # was 12 MB: the SVG of 55,000 cells as a PNG data URL
    width, height = svg_size(view.to_svg())
    assert width < MAX_SIDE * 22 + 1_000 and height < 1_000  # was 110,000 pixels wide


def test_a_long_output_of_a_long_input_is_bounded_in_cells():
    chars = [*("abcdefghij" * 100), "</s>"]
    drawn = shrink(chars, chars, np.full((1001, 1001), 1 / 1001))
    rows, cols = drawn.weights.shape
    assert rows * cols <= MAX_CELLS and (drawn.row_block, drawn.col_block) == (11, 10)
    assert (len(drawn.rows), len(drawn.cols)) == (rows, cols) == (91, 101)
    np.testing.assert_allclose(drawn.weights.sum(axis=1), 1.0)  # rows stay distributions
    assert "1,001 written are drawn 11 to a row" in drawn.note("1,001 written", "read")


def test_a_short_input_is_drawn_as_it_is():
    chars = [*"3 March 1999", "</s>"]
    view = translation_view([translation(chars, [*"1999-03-03", "</s>"])], "char")
    best = view.payload["levels"][0]["hypotheses"][0]
    assert best["source_tokens"] == chars and "note" not in view.payload["levels"][0]


def test_a_png_past_its_pixels_is_refused_in_a_sentence(tmp_path):
    chars = [*"3 March 1999", "</s>"]
    view = translation_view([translation(chars, [*"1999-03-03", "</s>"])], "char")
    width, height = svg_size(view.to_svg())
    too_large = (MAX_PNG_PIXELS / (width * height)) ** 0.5 * 1.01
    with pytest.raises(ValueError, match="give a smaller scale"):
        view.save_png(tmp_path / "view.png", scale=too_large)
    with pytest.raises(ValueError, match="scale nan is not a positive number"):
        view.save_png(tmp_path / "view.png", scale=float("nan"))
    assert not (tmp_path / "view.png").exists()
