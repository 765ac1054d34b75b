"""ERASER's comprehensiveness and sufficiency (attnlab.explain.eraser) on the hand-built models
whose answer is known, through either kind of forced reading.

In the faithful hand-built models (a translation model, tests/explain/test_faithfulness.py; an
LSTMN, tests/explain/test_self_attention.py) one position holds all the weight but e^-30 or
less, shared equally by the others, and the output reads attention alone. So by hand, at a step
whose positions attention ranks top first and then in order (the tied ones, lower first):
keeping the top k alone keeps the output (sufficiency 0), and taking them away leaves equal
weight on the rest, so the probability that remains is what the model reads from exactly
that uniform row (a hand-set attention, read through `replaced`). In the unfaithful models the
output ignores attention: nothing taken away or kept changes it (both 0).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.explain.eraser import PERCENTS, RANKINGS, bin_sizes, eraser
from attnlab.explain.forced import ForcedSentence
from attnlab.explain.intervene import replaced

from . import test_faithfulness as translation
from . import test_self_attention as lstmn


def reading(kind: str, faithful: bool):
    if kind == "translation":
        model = translation.hand_built(faithful)
        if faithful:
            return translation.pair_with_distinct_first(model)
        return translation.ForcedTranslation.of(model, [4, 5, 6, 7], [5, 6, 7])
    return ForcedSentence.of(lstmn.hand_built(faithful), lstmn.WORDS)


def test_the_bins_are_the_shares_of_the_positions_rounded_up_in_integers():
    assert PERCENTS == (1, 5, 10, 20, 50)
    sizes = bin_sizes(torch.tensor([2, 5, 30, 101]))
    assert sizes.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 3], [1, 2, 3, 6, 15],
                              [2, 6, 11, 21, 51]]   # 10% of 30 is 3, not ceil(3.0000000000000004)


@pytest.mark.parametrize("kind", ["translation", "lstmn"])
def test_nothing_taken_away_or_kept_moves_an_output_that_ignores_attention(kind):
    found = eraser(reading(kind, faithful=False), torch.Generator().manual_seed(0))
    assert set(found) == set(RANKINGS)
    for figures in found.values():
        assert figures.comprehensiveness.size > 0
        assert np.abs(figures.comprehensiveness).max() < 1e-12
        assert np.abs(figures.sufficiency).max() < 1e-12


def uniform_over_the_rest(forced, top: int, k: int) -> torch.Tensor:
    """p(y^) at each tested step with equal weight on its positions but the first k of the
    ranking top, then the others in order: (n,), read from hand-set weights."""
    steps, visible = forced.tested(), forced.visible()
    with torch.no_grad():
        probs = forced.own()[1]
    chosen = probs[steps].argmax(-1)
    weights = torch.zeros(len(steps), int(visible.max()), dtype=torch.float64)
    for i, positions in enumerate(visible.tolist()):
        order = [top, *(j for j in range(positions) if j != top)]
        size = int(bin_sizes(visible)[i, k])
        rest = order[size:]
        weights[i, rest] = 1.0 / len(rest)
    with torch.no_grad():
        return forced.read(steps, replaced(weights)).gather(1, chosen.unsqueeze(1)).squeeze(1)


@pytest.mark.parametrize("kind, top", [("translation", 0), ("lstmn", 1)])
def test_attention_s_rationale_is_sufficient_and_its_absence_costs_what_the_rest_gives(kind,
                                                                                   top):
    forced = reading(kind, faithful=True)
    found = eraser(forced, torch.Generator().manual_seed(0))
    steps = forced.tested()
    with torch.no_grad():
        probs = forced.own()[1][steps]
    own = probs.max(-1).values                                               # (n,)
    by_hand = torch.stack([own - uniform_over_the_rest(forced, top, k)
                           for k in range(len(PERCENTS))]).mean(0)
    attention = found["attention"]
    np.testing.assert_allclose(attention.comprehensiveness, by_hand.numpy(), atol=1e-9)
    assert attention.comprehensiveness.min() > 0.5        # the output needed that position
    assert np.abs(attention.sufficiency).max() < 1e-9     # and it alone keeps it
    # a random ranking leaves the position that matters in or out by chance
    random = found["random"]
    assert random.sufficiency.mean() > 0.1
    assert random.comprehensiveness.mean() < attention.comprehensiveness.mean()


def test_a_reading_without_a_step_to_test_gives_no_figures():
    found = eraser(ForcedSentence.of(lstmn.hand_built(True), [4]), torch.Generator())
    assert all(f.comprehensiveness.size == f.sufficiency.size == 0 for f in found.values())
