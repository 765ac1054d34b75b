"""benchmarks/calibration.py: its vectorised BLEU is sacreBLEU's, its nulls have equal expected
scores, and a small run prints every kind of cell (two seeds reading 0)."""

import argparse
import math

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

import calibration  # benchmarks/
from attnlab.compare.stats.across_seeds import compare_across_seeds


@pytest.fixture(scope="module")
def bleu() -> calibration.Metric:
    metric = calibration.bleu_metric(bank_seed=3, sentences=30)
    metric.calibrate(np.random.default_rng(0), repeats=60)
    return metric


def test_bleu_scorer_is_sacrebleus(bleu):
    bank = calibration.bleu_bank(3, 30)
    scorer = BLEU(effective_order=False)
    rng = np.random.default_rng(1)
    rows = [bank[rng.integers(0, 30, 20), rng.integers(0, 25, 20), 0].sum(axis=0)
            for _ in range(30)]
    rows.append(bank[0, -1, 0])                       # one sentence, likely a zero count
    rows.append(np.array([5, 6, 3, 0, 0, 0, 5, 4, 3, 2], dtype=float))   # zero 2-gram matches
    rows.append(np.zeros(10))
    got = calibration.bleu_scorer(np.stack(rows))
    want = [scorer._compute_score_from_stats([int(x) for x in row]).score for row in rows]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # batched shapes are kept
    assert calibration.bleu_scorer(np.stack(rows[:6]).reshape(2, 3, 10)).shape == (2, 3)


@pytest.mark.parametrize("make", [calibration.mean_metric, calibration.aer_metric])
def test_nulls_have_equal_expected_scores(make):
    metric = make()
    metric.calibrate(np.random.default_rng(2), repeats=200)
    sd_a, sd_b = metric.latent_sd(5.0), metric.latent_sd(0.5)
    shift = metric.shift_for(0.0, sd_a, sd_b)
    assert metric.mean_score(shift, sd_a) == pytest.approx(metric.mean_score(0.0, sd_b),
                                                           abs=1e-9)
    if make is calibration.mean_metric:
        assert shift == pytest.approx(0.0, abs=1e-9)
    worse = metric.shift_for(0.01 if metric.lower_is_better else -0.01, sd_a, sd_b)
    assert metric.mean_score(worse, sd_a) - metric.mean_score(0.0, sd_b) == pytest.approx(
        0.01 if metric.lower_is_better else -0.01, abs=1e-9)


def test_the_bleu_null_has_equal_expected_scores_and_is_simulated_so(bleu):
    sd_a, sd_b = bleu.latent_sd(5.0), bleu.latent_sd(0.5)
    shift = bleu.shift_for(0.0, sd_a, sd_b)
    assert bleu.mean_score(shift, sd_a) == pytest.approx(bleu.mean_score(0.0, sd_b), abs=1e-9)
    assert bleu.slope < 0 and bleu.test_noise > 0
    rng = np.random.default_rng(4)
    a, b = bleu.simulate(rng, 3, sd_a, sd_b, shift)
    assert a.shape == b.shape == (3, calibration.N, 10)
    result = compare_across_seeds(a, b, bleu.scorer, samples=50)
    assert result.decided and 0 < result.mean_a < 100 and math.isfinite(result.p_value or 0)


@pytest.mark.slow
def test_a_small_run_prints_every_kind_of_cell(bleu):
    args = argparse.Namespace(sims=3, margin_sims=3, paired_sims=3, two_seed_sims=2,
                              samples=20, power=True)
    rng = np.random.default_rng(5)
    rows = []
    for seeds in (2, 3):
        cell = calibration.Cell(bleu, seeds, 10.0, 1.0)
        found, se = calibration.across(cell, args, rng)
        rows += found + calibration.margins(cell, se, args, rng) + calibration.paired(
            cell, args, rng)
    tests = [row.split(" | ")[0].lstrip("| ") for row in rows]
    assert tests == ["across seeds: p < 0.05", "equivalence (TOST): equivalent",
                     "non-inferiority: no worse", "paired readings: p < 0.05"] * 2
    for row in rows[:4]:      # two seeds decide nothing
        cells = [part.strip() for part in row.split("|")]
        assert cells[7] == "2" and cells[8] == "0.000"
    assert calibration.rate_cells(10, 20).endswith("ABOVE")
    assert not calibration.rate_cells(1, 20).endswith("ABOVE")
