"""The erasure test's controls of comparable weight (attnlab.explain.controls) on hand-set
attention and on hand-built models whose answer is known, for both kinds of forced reading.

- Hand-set rows: which positions each control may erase, and how often, by hand.
- The faithful hand-built models (tests/explain/test_faithfulness.py, a translation model, and
  tests/explain/test_self_attention.py, an LSTMN) put all but e^-30 or less of the weight on one
  position: the second most attended holds nothing, so erasing it changes nothing, and the
  random control of non-negligible weight falls back to it.
- A split translation model puts 0.6 and 0.4 of the weight on source positions 0 and 1, the
  rest nearly none, and the output read from their mix differs from the output of either
  alone: erasing either changes every chosen token. The old control, a random other position,
  finds position 1 a quarter of the time (one of four others) and else erases nothing.
"""

from __future__ import annotations

import pytest
import torch

from attnlab.explain.controls import ERASED, NEGLIGIBLE, Rows, random_weighted, second_attended
from attnlab.explain.faithfulness import erasure_flips
from attnlab.explain.forced import ForcedSentence, ForcedTranslation, gradient_x_input
from attnlab.explain.intervene import replaced

from . import test_faithfulness as translation
from . import test_self_attention as lstmn

ROWS = torch.tensor([[0.70, 0.20, 0.06, 0.04],     # top 0; of weight: 1 and 2
                     [0.10, 0.50, 0.30, 0.10],     # top 1; of weight: 0, 2 and 3
                     [0.97, 0.01, 0.01, 0.01],     # nothing else of weight: the second, 1
                     [0.50, 0.50, 0.00, 0.00]])    # reads 2 positions: top 0, then 1
VISIBLE = torch.tensor([4, 4, 4, 2])
DRAWABLE = [{1: 1 / 2, 2: 1 / 2}, {0: 1 / 3, 2: 1 / 3, 3: 1 / 3}, {1: 1.0}, {1: 1.0}]


def hand_set(generator: torch.Generator) -> Rows:
    where = torch.arange(4) < VISIBLE.unsqueeze(1)
    # no forced reading: these controls read the rows alone
    return Rows(None, ROWS, where, ROWS, generator, generator)


def test_the_second_most_attended_is_the_next_weight_down_ties_to_the_lower():
    assert second_attended(hand_set(torch.Generator())).tolist() == [1, 2, 1, 1]


def test_the_random_control_draws_evenly_among_the_others_of_non_negligible_weight():
    assert NEGLIGIBLE == 0.05     # the rows above are set around it
    generator = torch.Generator().manual_seed(0)
    draws = torch.stack([random_weighted(hand_set(generator)) for _ in range(3000)])  # (N, 4)
    for row, expected in enumerate(DRAWABLE):
        found = draws[:, row]
        assert set(found.tolist()) == set(expected)              # never another position
        for position, share in expected.items():
            assert (found == position).double().mean().item() == pytest.approx(share, abs=0.03)


def split_pair() -> ForcedTranslation:
    """The faithful hand-built model with position 1 given nearly as much weight as
    position 0 (0.6, 0.4), on a source whose mix, position 0 alone and position 1 alone give
    three different outputs at every step."""
    model = translation.hand_built(True)
    with torch.no_grad():
        model.decoder.attention.mechanism.score.position_logits.weight[1] = 9.95
    for first in range(4, translation.VOCAB):
        for second in range(4, translation.VOCAB):
            pair = ForcedTranslation.of(model, [first, second, 9, 9], [5, 6, 7])
            with torch.no_grad():
                mix = pair.own()[1].argmax(-1)
            alone = [read_alone(pair, position) for position in (0, 1)]
            if all(bool((mix != other).all()) for other in alone):
                return pair
    raise AssertionError("no source whose two attended positions both decide the output")


def read_alone(forced, position: int) -> torch.Tensor:
    """The chosen tokens with all of every step's weight on `position`."""
    steps = forced.tested()
    weights = torch.zeros(len(steps), forced.visible().max().item(), dtype=torch.float64)
    weights[:, position] = 1.0
    with torch.no_grad():
        return forced.read(steps, replaced(weights)).argmax(-1)


def test_controls_of_comparable_weight_flip_where_both_positions_decide():
    pair = split_pair()
    attention = pair.own()[0].detach()
    assert attention[:, 0].min() > 0.55 and attention[:, 1].min() > 0.35
    gradient = pair.attribute("gradient", 1)
    found = erasure_flips(pair, gradient, torch.Generator().manual_seed(4))
    steps = found.steps
    assert (found.top_attention, found.second_attention, found.random_weighted) == \
        (steps, steps, steps)
    # the old control: a uniform draw among the 4 others, position 1 the only one that counts
    top = torch.zeros(steps, dtype=torch.long)
    drawn = pair.random_other(top, torch.Generator().manual_seed(4))
    assert found.random == int((drawn == 1).sum())
    assert found.weight["second_attention"] == pytest.approx(float(attention[:, 1].sum()))
    assert found.weight["random"] == pytest.approx(float(attention[:, 1].sum()) *
                                                   found.random / steps, abs=1e-12)


@pytest.mark.parametrize("kind", ["translation", "lstmn"])
def test_where_one_position_holds_all_the_weight_the_controls_erase_nothing(kind):
    if kind == "translation":
        forced = translation.pair_with_distinct_first(translation.hand_built(True))
        gradient = forced.attribute("gradient", 1)
    else:
        forced = ForcedSentence.of(lstmn.hand_built(True), lstmn.WORDS)
        gradient = gradient_x_input(forced)
    found = erasure_flips(forced, gradient, torch.Generator().manual_seed(0))
    assert set(found.flips) == set(found.weight) == set(ERASED)
    assert found.top_attention == found.steps > 0
    assert found.second_attention == found.random_weighted == 0
    assert found.weight["top_attention"] == pytest.approx(found.steps, abs=1e-6)
    assert found.weight["second_attention"] < 1e-6 and found.weight["random_weighted"] < 1e-6


def test_a_reading_without_a_step_to_test_erases_nothing():
    sentence = ForcedSentence.of(lstmn.hand_built(True), [4])        # <s> 4: nothing tested
    found = erasure_flips(sentence, gradient_x_input(sentence), torch.Generator())
    assert found.steps == 0 and set(found.flips.values()) == {0}
    assert set(found.weight.values()) == {0.0}
