"""benchmarks/per_seed_rule.py (the old rule, kept for benchmarks/calibration.py): sacreBLEU's
paired tests, the AER paired bootstrap, and the verdict over seeds with its sentence; and the
spreads over seeds that the product keeps (attnlab.compare.stats.seeds)."""

import logging
import math
import os
import random

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest, _compute_p_value

from attnlab.compare.stats.seeds import Spread, spread
from attnlab.translation.alignment import AlignmentSet, aer_counts, aer_from_counts
from per_seed_rule import (
    RULE,
    PairResult,
    aer_pair_test,
    finding_sentence,
    seed_split,
    seed_verdict,
    text_pair_test,
)

WORDS = ("a man woman dog child in on the with red blue shirt is riding running bike street "
         "park ball two three people near water green small big").split()


def corpus(n: int = 80, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(8, 14))) for _ in range(n)]


def corrupt(sentences: list[str], rate: float, seed: int) -> list[str]:
    """Replace each word with a random one with probability rate."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) if rng.random() < rate else word
                     for word in sentence.split()) for sentence in sentences]


REFS = corpus()
SECOND_REFS = corrupt(REFS, 0.2, seed=99)  # a second reference stream
# Two systems of the same quality, wrong in different places: p lies mid-range.
SYS_X, SYS_Y = corrupt(REFS, 0.3, seed=1), corrupt(REFS, 0.3, seed=2)


@pytest.mark.parametrize("method", ["bs", "ar"])
def test_a_large_difference_is_significant(method):
    bad = corrupt(REFS, 0.8, seed=3)
    results = text_pair_test(REFS, bad, [REFS], method=method, samples=300)
    assert set(results) == {"bleu", "chrf"}
    for metric, result in results.items():
        assert result.metric == metric and result.method == method
        assert result.a == pytest.approx(100.0) and result.b < 40.0
        assert result.difference == result.a - result.b > 60.0
        assert result.p_value == pytest.approx(1 / 301)  # no resample comes close
        assert result.significant(0.05) and result.significant(0.01)
    # the other way round: the same p-value, the opposite difference
    flipped = text_pair_test(bad, REFS, [REFS], method=method, samples=300)
    assert flipped["bleu"].difference == pytest.approx(-results["bleu"].difference)
    assert flipped["bleu"].p_value == results["bleu"].p_value


@pytest.mark.parametrize("method", ["bs", "ar"])
def test_identical_systems_are_not_significant(method, monkeypatch):
    results = text_pair_test(SYS_X, list(SYS_X), [REFS], method=method, samples=200)
    for result in results.values():
        assert result.difference == 0.0 and result.a == result.b
        assert result.p_value == 1.0 and not result.significant()
    # sacreBLEU itself gives identical systems its smallest p-value (hence the p = 1 above)
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    _, raw = PairedTest([("B", SYS_X), ("A", SYS_X)], {"BLEU": BLEU()}, [REFS],
                        test_type=method, n_samples=200)()
    assert raw["BLEU"][1].p_value == pytest.approx(1 / 201)


@pytest.mark.parametrize("method", ["bs", "ar"])
def test_results_are_sacrebleus_own(method, monkeypatch):
    references = [REFS, SECOND_REFS]  # two streams, as captioning has several references
    ours = text_pair_test(SYS_X, SYS_Y, references, method=method, samples=300, seed=7)
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    _, scores = PairedTest([("baseline", SYS_Y), ("system", SYS_X)],
                           {"BLEU": BLEU(), "chrF": CHRF()}, references,
                           test_type=method, n_samples=300)()
    for key, name in [("bleu", "BLEU"), ("chrf", "chrF2")]:
        baseline, system = scores[name]
        assert ours[key].a == system.score and ours[key].b == baseline.score
        assert ours[key].difference == system.score - baseline.score
        assert ours[key].p_value == system.p_value
    assert 0.01 < ours["bleu"].p_value < 0.99  # a p-value that the seed can move
    assert ours == text_pair_test(SYS_X, SYS_Y, references, method=method, samples=300, seed=7)
    flipped = text_pair_test(SYS_Y, SYS_X, references, method=method, samples=300, seed=7)
    assert flipped["bleu"].p_value == ours["bleu"].p_value  # symmetric in A and B
    assert flipped["bleu"].difference == -ours["bleu"].difference
    other = text_pair_test(SYS_X, SYS_Y, references, method=method, samples=300, seed=8)
    assert other["bleu"].a == ours["bleu"].a
    assert (other["bleu"].p_value, other["chrf"].p_value) != (ours["bleu"].p_value,
                                                              ours["chrf"].p_value)


def test_text_pair_test_leaves_environment_and_logging_as_they_were(monkeypatch, caplog):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    logger = logging.getLogger("sacrebleu")
    with caplog.at_level(logging.INFO):
        level = logger.level
        text_pair_test(SYS_X, SYS_Y, [REFS], samples=50)
        assert logger.level == level
    assert "SACREBLEU_SEED" not in os.environ
    assert not [r for r in caplog.records if r.name == "sacrebleu"]


def test_text_pair_test_checks_its_input():
    with pytest.raises(ValueError, match="same number"):
        text_pair_test(SYS_X, SYS_Y[:-1], [REFS])
    with pytest.raises(ValueError, match="same number"):
        text_pair_test(SYS_X, SYS_Y, [REFS, SECOND_REFS[:-1]])
    with pytest.raises(ValueError, match="unknown test method 'pbs'"):
        text_pair_test(SYS_X, SYS_Y, [REFS], method="pbs")
    with pytest.raises(ValueError, match="seed must be at least 1"):
        text_pair_test(SYS_X, SYS_Y, [REFS], seed=0)


def alignments(n: int = 120, seed: int = 0):
    """Gold alignments of n sentence pairs, a perfect prediction, and noisy predictions."""
    rng = np.random.default_rng(seed)
    gold, perfect = [], []
    for _ in range(n):
        length = int(rng.integers(4, 12))
        sure = {(j, j) for j in range(length) if rng.random() < 0.8}
        possible = {(j, j + 1) for j in range(length - 1) if rng.random() < 0.3}
        gold.append(AlignmentSet(sure=sure, possible=possible))
        perfect.append(sure)

    def noisy(rate: float, noise_seed: int) -> list[set[tuple[int, int]]]:
        noise = np.random.default_rng(noise_seed)
        return [{(s, t) if noise.random() > rate else (s, int(noise.integers(0, 12)))
                 for s, t in links} | {(0, int(noise.integers(0, 12)))} for links in perfect]

    return gold, perfect, noisy


def test_aer_pair_test_identical_and_clearly_better():
    gold, perfect, noisy = alignments()
    good = aer_counts(perfect, gold)
    bad = aer_counts(noisy(0.6, 1), gold)
    same = aer_pair_test(bad, bad.copy(), samples=300)
    assert same.difference == 0.0 and same.p_value == 1.0 and not same.significant()
    better = aer_pair_test(good, bad, samples=300)
    assert better.metric == "aer" and better.method == "bs"
    assert better.a == aer_from_counts(good) == 0.0
    assert better.b == aer_from_counts(bad) > 0.3
    assert better.difference == aer_from_counts(good) - aer_from_counts(bad)
    assert better.p_value == pytest.approx(1 / 301) and better.significant(0.01)
    assert aer_pair_test(bad, good, samples=300).p_value == better.p_value


def test_aer_pair_test_uses_sacrebleus_p_value_formula():
    gold, _, noisy = alignments()
    a, b = aer_counts(noisy(0.30, 1), gold), aer_counts(noisy(0.33, 2), gold)
    result = aer_pair_test(a, b, samples=400, seed=5)
    assert result.difference == aer_from_counts(a) - aer_from_counts(b) != 0
    # the same resamples, by hand, through sacreBLEU's own p-value function
    indices = np.random.default_rng(5).choice(len(a), size=(400, len(a)), replace=True)
    diffs = np.abs(np.array([aer_from_counts(a[i]) - aer_from_counts(b[i]) for i in indices]))
    expected = _compute_p_value(diffs - diffs.mean(), abs(result.difference))
    assert result.p_value == expected
    assert 0.01 < result.p_value < 0.99
    assert aer_pair_test(a, b, samples=400, seed=5) == result


def test_aer_pair_test_checks_its_input():
    gold, perfect, noisy = alignments(n=10)
    counts = aer_counts(perfect, gold)
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        aer_pair_test(counts, counts[:-1])
    with pytest.raises(ValueError, match="not of the same sentences"):
        other = counts.copy()
        other[0, 3] += 1
        aer_pair_test(counts, other)


def test_spread_on_known_numbers():
    values = spread([1.0, 2.0, 3.0, 4.0])
    assert values == Spread(mean=2.5, sd=pytest.approx(math.sqrt(5 / 3)), low=1.0, high=4.0, n=4)
    assert values.text(2) == "2.50 ± 1.29"
    assert spread([23.16, 24.01, 24.86]).text(2) == "24.01 ± 0.85"
    single = spread([24.01])
    assert (single.sd, single.n, single.text(2)) == (0.0, 1, "24.01")
    with pytest.raises(ValueError, match="finite"):
        spread([1.0, float("nan")])
    with pytest.raises(ValueError, match="non-empty"):
        spread([])


def result(difference: float, p_value: float, metric: str = "bleu") -> PairResult:
    return PairResult(metric, 20.0 + difference, 20.0, difference, p_value, "bs")


def test_seed_verdict_majority_rule():
    assert seed_verdict([result(1.0, 0.001)] * 3) == (">", 3, 3)
    assert seed_verdict([result(1.0, 0.01), result(0.5, 0.02), result(0.1, 0.4)]) == (">", 2, 3)
    assert seed_verdict([result(-1.0, 0.01), result(-0.5, 0.02), result(2.0, 0.01)]) == ("<", 2, 3)
    # no strict majority either way: "=", k counting the seeds without a significant difference
    assert seed_verdict([result(1.0, 0.01), result(-1.0, 0.01), result(0.2, 0.5)]) == ("=", 1, 3)
    assert seed_verdict([result(1.0, 0.01)] * 2 + [result(0.1, 0.3)] * 2) == ("=", 2, 4)
    assert seed_verdict([result(0.1, 0.3)] * 3) == ("=", 3, 3)
    # alpha decides what counts as significant
    assert seed_verdict([result(1.0, 0.03)] * 3, alpha=0.01) == ("=", 3, 3)


def test_seed_verdict_lower_is_better():
    lower = [result(-0.05, 0.001, "aer")] * 3  # A's AER is lower: A is better
    assert seed_verdict(lower, lower_is_better=True) == (">", 3, 3)
    assert seed_verdict(lower) == ("<", 3, 3)


def test_seed_verdict_checks_its_input():
    with pytest.raises(ValueError, match="at least one seed"):
        seed_verdict([])
    with pytest.raises(ValueError, match="different metrics"):
        seed_verdict([result(1.0, 0.01), result(1.0, 0.01, "chrf")])


def test_finding_sentences():
    assert (finding_sentence("Bahdanau", "no attention", "BLEU", (">", 3, 3))
            == "Bahdanau > no attention on BLEU (p < 0.05 in 3 of 3 seeds)")
    assert (finding_sentence("dot", "general", "AER", ("<", 2, 3), alpha=0.01)
            == "dot < general on AER (p < 0.01 in 2 of 3 seeds)")
    assert (finding_sentence("X", "Y", "chrF", ("=", 3, 3))
            == "no significant difference between X and Y on chrF "
               "(0 of 3 seeds significant at p < 0.05)")
    assert (finding_sentence("X", "Y", "BLEU", ("=", 0, 1))
            == "no significant difference between X and Y on BLEU "
               "(1 of 1 seed significant at p < 0.05)")
    verdict = seed_verdict([result(1.0, 0.01), result(0.3, 0.2), result(0.1, 0.6)])
    assert finding_sentence("X", "Y", "BLEU", verdict).endswith("(1 of 3 seeds significant "
                                                                "at p < 0.05)")
    with pytest.raises(ValueError, match="unknown verdict direction"):
        finding_sentence("X", "Y", "BLEU", ("?", 1, 1))


def test_rule_is_one_plain_sentence():
    assert RULE.endswith(".") and RULE.count(". ") == 0
    assert "strict majority" in RULE and "p < 0.05" in RULE and "lower" in RULE


def test_seeds_that_disagree_are_said_to_disagree():
    # local-p against general, 2 seeds: significantly better in one, worse in the other. The
    # sentence used to read "no significant difference (2 of 2 seeds significant)".
    results = [result(3.0, 0.001), result(-4.0, 0.001)]
    verdict, split = seed_verdict(results), seed_split(results)
    assert verdict == ("=", 0, 2) and split == (1, 1)
    assert (finding_sentence("local-p", "general", "BLEU", verdict, split=split)
            == "no consistent difference between local-p and general on BLEU (the seeds "
               "disagree: local-p significantly better in 1, worse in 1, of 2 seeds, p < 0.05)")
    # one direction only: the counting sentence stays
    one_way = [result(1.0, 0.01), result(0.1, 0.4), result(0.2, 0.5)]
    assert seed_split(one_way) == (1, 0)
    assert (finding_sentence("X", "Y", "BLEU", seed_verdict(one_way), split=seed_split(one_way))
            == "no significant difference between X and Y on BLEU "
               "(1 of 3 seeds significant at p < 0.05)")
    assert seed_split([result(-0.05, 0.001, "aer")] * 2, lower_is_better=True) == (2, 0)
