"""Caption scores: multi-reference BLEU-1..4, the localisation score, and the figure."""

import numpy as np
import pytest

from attnlab.captioning import ObjectBox, caption_bleu, cell_coverage, localise
from attnlab.captioning.metrics import caption_metrics
from attnlab.viz.image_attention import image_attention_figure, upsample_attention

# A 4 x 4 image with a 2 x 2 attention grid (each cell 2 x 2 px).
RED_CIRCLE = ObjectBox((0, 0, 2, 2), "red", "circle")  # exactly cell (0, 0)
BLUE_SQUARE = ObjectBox((1, 2, 4, 4), "blue", "square")  # half of cell (1, 0), all of (1, 1)
WORDS = "a red circle left of a blue square".split()


def attention_for(words, maps):
    """(T, 2, 2) attention: the given maps at their words, uniform elsewhere."""
    attention = np.full((len(words), 2, 2), 0.25)
    for t, grid in maps.items():
        attention[t] = grid
    return attention


def test_localisation_matches_a_hand_computation():
    attention = attention_for(WORDS, {
        1: [[0.5, 0.2], [0.2, 0.1]],  # "red": 0.5 inside the circle's cell
        2: [[0.9, 0.1], [0.0, 0.0]],  # "circle": 0.9
        6: [[0.1, 0.1], [0.4, 0.4]],  # "blue": 0.5 * 0.4 + 0.4 = 0.6
        7: [[0.0, 0.0], [0.2, 0.8]],  # "square": 0.5 * 0.2 + 0.8 = 0.9
    })
    result = localise(WORDS, attention, [RED_CIRCLE, BLUE_SQUARE], 4)
    assert (result.words, result.mentions, result.unmatched) == (4, 2, 0)
    assert result.score == pytest.approx((0.5 + 0.9 + 0.6 + 0.9) / 4)
    # the circle covers 4 / 16 of the image, the square 6 / 16
    assert result.chance_level == pytest.approx((0.25 * 2 + 0.375 * 2) / 4)


def test_uniform_attention_scores_the_chance_level():
    result = localise(WORDS, np.full((8, 2, 2), 0.25), [RED_CIRCLE, BLUE_SQUARE], 4)
    assert result.score == pytest.approx(result.chance_level)


def test_mentions_are_matched_by_colour_and_shape_or_left_unmatched():
    words = "a blue square left of a green circle".split()
    attention = attention_for(words, {1: [[0, 0], [0, 1.0]], 2: [[0, 0], [0, 1.0]]})
    result = localise(words, attention, [RED_CIRCLE, BLUE_SQUARE], 4)
    # the blue square is named first although it is the second object; no green circle
    assert (result.mentions, result.unmatched, result.words) == (2, 1, 2)
    assert result.score == pytest.approx(1.0)


def test_cell_coverage_shares_sum_to_the_box_area():
    coverage = cell_coverage((1.5, 0.5, 7.0, 3.0), (4, 4), 8)  # cells of 2 x 2 px
    assert coverage.sum() * 4 == pytest.approx(5.5 * 2.5)
    assert coverage[0, 1] == pytest.approx(0.75) and coverage[3, 3] == 0


def test_bleu_uses_every_reference():
    references = [["a red circle left of a blue square",
                   "a red circle to the left of a blue square"], ["a single red circle"]]
    scores, signature = caption_bleu(["a red circle to the left of a blue square",
                                      "a single red circle"], references)
    assert all(scores[f"bleu{n}"] == pytest.approx(100.0) for n in range(1, 5))
    assert "nrefs:var" in signature
    partial, _ = caption_bleu(["a red circle left of a square", "a red circle"], references)
    assert 0 < partial["bleu4"] < partial["bleu1"] < 100


def test_caption_metrics_reports_localisation_only_with_boxes():
    hypotheses = [WORDS]
    references = [[WORDS]]
    attention = [np.full((8, 2, 2), 0.25)]
    with_boxes, _ = caption_metrics(hypotheses, attention, references,
                                    [[RED_CIRCLE, BLUE_SQUARE]], 4)
    assert with_boxes["localisation"] == pytest.approx(with_boxes["localisation_chance"])
    without, _ = caption_metrics(hypotheses, attention, references, [[]], 4)
    assert "localisation" not in without and without["bleu4"] == pytest.approx(100.0)


def test_upsampled_attention_keeps_where_the_mass_is():
    weights = np.zeros((4, 4))
    weights[1, 2] = 1.0
    pixels = upsample_attention(weights, (32, 32))
    assert pixels.shape == (32, 32)
    row, col = np.unravel_index(pixels.argmax(), pixels.shape)
    assert 8 <= row < 16 and 16 <= col < 24  # inside cell (1, 2)
    assert np.allclose(upsample_attention(np.full((4, 4), 0.5), (32, 32)), 0.5)


def test_figure_has_the_image_and_one_titled_panel_per_word():
    pixels = np.zeros((16, 16, 3), dtype=np.uint8)
    attention = np.random.default_rng(0).dirichlet(np.ones(4), size=3).reshape(3, 2, 2)
    figure = image_attention_figure(pixels, ["a", "red", "circle"], attention,
                              marks=[(0, 0), (1, 1), (0, 1)])
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert titles == ["(image)", "a", "red", "circle"]
    with pytest.raises(ValueError, match="words"):
        image_attention_figure(pixels, ["a"], attention)
