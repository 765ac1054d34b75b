"""Length and coverage penalties (Wu et al. 2016, eq. 14): the formula on a hand-made attention
matrix, beta = 0 changes nothing, and search scores every hypothesis with its own attention."""

import math

import pytest
import torch

from attnlab.decode import Penalty, beam_search, coverage_penalty, greedy_search
from attnlab.decode.penalties import ALPHA_MAX, BETA_MAX
from attnlab.errors import ConfigError

from .models import NAMES, limit, sources, tiny
from .test_search import assert_same

ATTENTIVE = sorted(set(NAMES) - {"none"})


def test_coverage_penalty_is_the_formula_on_a_hand_made_matrix():
    attention = torch.tensor([[0.7, 0.2, 0.1, 0.0],
                              [0.5, 0.2, 0.1, 0.2],
                              [0.1, 0.1, 0.1, 0.7]])  # (T=3, S=4): column sums 1.3 .5 .3 .9
    expected = 0.4 * (math.log(1.0) + math.log(0.5) + math.log(0.3) + math.log(0.9))
    assert coverage_penalty(attention, 0.4) == pytest.approx(expected, abs=1e-7)
    assert coverage_penalty(attention, 0.0) == 0.0
    # s(Y, X) = log P / lp + cp
    lp = ((5 + 3) / 6) ** 0.6
    penalty = Penalty(alpha=0.6, beta=0.4)
    assert penalty.score(-2.5, 3, attention) == pytest.approx(-2.5 / lp + expected, abs=1e-7)


def test_a_source_position_never_attended_to_costs_a_finite_penalty():
    attention = torch.tensor([[1.0, 0.0]])
    penalty = coverage_penalty(attention, 1.0)
    assert math.isfinite(penalty) and penalty < -40


def test_length_penalties():
    assert Penalty("average").score(-6.0, 3, None) == -2.0
    assert Penalty("none").score(-6.0, 3, None) == -6.0
    assert Penalty("gnmt", alpha=0.0).score(-6.0, 3, None) == -6.0
    with pytest.raises(ValueError, match="unknown length penalty 'mean'"):
        Penalty("mean")
    with pytest.raises(ValueError, match="beta"):
        Penalty(beta=-1.0)
    with pytest.raises(ValueError, match="not both"):
        beam_search(tiny("none"), *sources(), beam_size=2, max_len=3, alpha=0.5,
                    penalty=Penalty())


@pytest.mark.parametrize("name", sorted(NAMES))
def test_beta_zero_changes_nothing(name):
    model, (src, mask) = tiny(name), sources()
    plain = beam_search(model, src, mask, beam_size=3, alpha=0.7, max_len=limit, n_best=3)
    zero = beam_search(model, src, mask, beam_size=3, max_len=limit, n_best=3,
                       penalty=Penalty(alpha=0.7, beta=0.0))
    for got, want in zip(zero, plain, strict=True):
        assert_same(got, want, tolerance=0.0)
    greedy = greedy_search(model, src, mask, max_len=limit, alpha=0.7)
    assert_same(greedy_search(model, src, mask, max_len=limit, penalty=Penalty(alpha=0.7)),
                greedy, tolerance=0.0)


@pytest.mark.parametrize("name", ATTENTIVE)
def test_search_scores_each_hypothesis_with_its_own_coverage(name):
    """Every decoder and mechanism (hard attention: its expected weights)."""
    model, (src, mask) = tiny(name), sources()
    penalty = Penalty(alpha=0.5, beta=0.3)
    found = beam_search(model, src, mask, beam_size=3, max_len=limit, n_best=3, penalty=penalty)
    for hypotheses in found:
        for hypothesis in hypotheses:
            lp = ((5 + len(hypothesis.tokens)) / 6) ** 0.5
            coverage = hypothesis.attention.sum(0).clamp(1e-20, 1.0).log().sum()  # local: 0s
            assert hypothesis.score == pytest.approx(hypothesis.log_prob / lp
                                                     + 0.3 * float(coverage), abs=1e-9)
        scores = [h.score for h in hypotheses]
        assert scores == sorted(scores, reverse=True)
    (greedy,) = greedy_search(model, src[:1], mask[:1], max_len=limit, penalty=penalty)
    coverage = greedy.attention.sum(0).clamp(1e-20, 1.0).log().sum()
    assert greedy.score == pytest.approx(
        greedy.log_prob / ((5 + len(greedy.tokens)) / 6) ** 0.5 + 0.3 * float(coverage))


def test_a_strong_coverage_penalty_prefers_other_hypotheses():
    changed = 0
    for name in ATTENTIVE:
        model, (src, mask) = tiny(name), sources()
        plain, covered = (beam_search(model, src, mask, beam_size=4, max_len=limit,
                                      penalty=Penalty(alpha=0.5, beta=beta))
                          for beta in (0.0, 5.0))
        changed += sum(a[0].tokens != b[0].tokens for a, b in zip(plain, covered, strict=True))
    assert changed > 0


def test_the_coverage_penalty_needs_attention():
    with pytest.raises(ValueError, match="needs attention weights"):
        beam_search(tiny("none"), *sources(), beam_size=2, max_len=limit,
                    penalty=Penalty(beta=0.2))


@pytest.mark.parametrize(("changes", "message"), [
    ({"alpha": 1e308}, r"alpha \(decode.alpha\) must be a number from 0 to 10, got 1e\+308"),
    ({"beta": 1e308}, r"beta \(decode.beta\) must be a number from 0 to 10, got 1e\+308"),
    ({"alpha": math.nan}, "alpha .* got nan"),
    ({"beta": -math.inf}, "beta .* got -inf"),
    ({"alpha": -0.1}, "alpha .* got -0.1"),
])
def test_penalties_past_their_range_are_one_sentence(changes, message):
    # before: alpha 1e308 overflowed in the score (OverflowError), beta 1e308 scored -inf
    with pytest.raises(ConfigError, match=message):
        Penalty(**changes)


def test_the_largest_penalties_keep_every_score_finite():
    penalty = Penalty(alpha=ALPHA_MAX, beta=BETA_MAX)
    never_attended = torch.zeros(3, 10_000)  # (T, S): the floor on every position
    for length in (1, 1000, 10**6):
        score = penalty.score(-1e4, length, never_attended)
        assert math.isfinite(score) and score < 0
