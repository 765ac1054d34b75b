"""The LSTMN reading figure: one line per step, current word red, memory shaded by weight."""

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from PIL import Image

from attnlab.viz import plot_self_attention, self_attention_figure
from attnlab.viz.self_attention import CURRENT_COLOUR

TOKENS = "The boy who ate the apple is happy .".split()


def lstmn_weights(steps, seed=0):
    """Row t is a distribution over positions < t (row 0 is empty)."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((steps, steps))
    for t in range(1, steps):
        weights[t, :t] = rng.dirichlet(np.ones(t))
    return weights


def test_png_written_one_line_per_step(tmp_path):
    path = plot_self_attention(TOKENS, lstmn_weights(len(TOKENS)), tmp_path / "lstmn.png")
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width > image.height > 100


def test_current_word_red_and_memory_boxes_carry_weights():
    weights = lstmn_weights(len(TOKENS))
    texts = self_attention_figure(TOKENS, weights).texts
    assert len(texts) == len(TOKENS) ** 2
    steps = len(TOKENS)
    red = [k for k, text in enumerate(texts) if text.get_color() == CURRENT_COLOUR]
    assert red == [t * steps + t for t in range(steps)]  # the diagonal, line by line
    box = texts[3 * steps + 1].get_bbox_patch()  # step 3, earlier word 1
    assert box.get_facecolor()[3] == pytest.approx(weights[3, 1])
    assert texts[3 * steps + 5].get_bbox_patch() is None  # a later word has no box
    assert to_rgba(texts[3 * steps + 5].get_color()) != to_rgba("black")


def test_bad_weights_are_errors(tmp_path):
    with pytest.raises(ValueError, match=r"expected \(3, 3\)"):
        plot_self_attention(["a", "b", "c"], np.zeros((2, 3)), tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"within \[0, 1\]"):
        plot_self_attention(["a", "b"], np.array([[0, 0], [2.0, 0]]), tmp_path / "x.png")


@pytest.mark.parametrize(("tokens", "shown"), [
    (["w"] * 1_000, 100),  # past MAX_WORDS words
    (["a-rather-long-word-of-thirty-c"] * 200, None),  # past MAX_PIXELS wide first
])
def test_a_long_sentence_draws_its_first_words_and_says_so(tokens, shown):
    from attnlab.viz.heatmap import MAX_PIXELS
    from attnlab.viz.self_attention import MAX_WORDS

    figure = self_attention_figure(tokens, np.tril(np.ones((len(tokens),) * 2), -1) / 10)
    note = figure.texts[-1].get_text()
    drawn = int(note.split()[2])
    assert note == f"the first {drawn} of {len(tokens):,} words"
    assert drawn == shown if shown else 1 < drawn < MAX_WORDS
    assert len(figure.texts) == drawn**2 + 1
    width, height = figure.get_size_inches() * figure.dpi
    assert width <= MAX_PIXELS and height <= MAX_PIXELS
