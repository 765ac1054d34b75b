"""Is member A better than member B, or as good, across training seeds? A training run is the
unit of replication: a difference counts only against the spread between seeds AND the noise of
which test sentences were drawn, never against one of them alone.

    result = compare_across_seeds(stats_a, stats_b, score)   # stats (seeds, sentences, k)
    result.difference, result.interval, result.p_value       # A - B, its 95% CI, two-sided p
    result.equivalence(margin=1.0)                           # "equivalent" | "different" | ...
    compare_paired_across_seeds(stats_a, stats_b, score)     # run s of A and of B: one run

The model. Member A's score with training seed s on a test set is a_s = mu_A + u_s + t_A, where u_s
is seed-to-seed variation (variance sigma_A^2) and t_A what the drawn test sentences add. The
difference of the members' means over their seeds, D = mean(a) - mean(b), then has variance

    Var(D) = sigma_A^2 / n_A + sigma_B^2 / n_B + Var_test(D),

the first two estimated from the seeds' scores (sample variances: their spread holds the
training variance and each run's own luck on the drawn sentences), the last by a bootstrap over
sentences that resamples the same sentences for every run of both members (Koehn 2004's paired
bootstrap, applied to the mean over seeds), less the runs' own sentence noise that the seeds'
spread already holds (estimated from the runs' deviations in the same resamples).

Degrees of freedom. D / sqrt(Var(D)) is referred to Student's t with the Welch-Satterthwaite
degrees of freedom of the seeds' terms alone,

    df = (s_A^2/n_A + s_B^2/n_B)^2 / ((s_A^2/n_A)^2 / (n_A - 1) + (s_B^2/n_B)^2 / (n_B - 1))

(the paired test: n - 1), whatever the test term. The test term is an estimate too (a difference
of two bootstrap variances, sharing the runs' own sentence noise with the seeds' spread);
counting it as known (infinite degrees of freedom) in the Satterthwaite formula raised the df
faster than it widened the standard error, so a true null was rejected 6.5-7.7% of the time at
alpha 0.05 with 3 seeds and unequal seed spreads (issue 44). The rule now: the test term never
raises the df above the seeds-only Welch df, i.e. df is capped at it, which is conservative -
the interval is never narrower than plain Welch on the seeds' scores, and with no test variance
the test is exactly Welch's (the paired one exactly the paired t). `benchmarks/calibration.py`
measures the level of this rule over 2-10 seeds, seed spreads unequal up to a ratio of 10, test
noise from 0.2x to 5x the seeds' spread, BLEU from sacreBLEU sentence statistics, and the
equivalence, non-inferiority and paired tests; tests/compare/test_across_seeds.py holds it to
its level and power by simulation. (A better-founded alternative would be a parametric bootstrap
of the critical value, simulating the seeds' and the test term's estimates; the cap needs no
extra simulation, and the calibration's table is where to check that it holds the level.)

The test variance's estimator: the bootstrap difference above can come out negative (the runs'
own noise estimated larger than the whole): the estimate is then truncated at zero, the usual
REML-like choice for a variance component; the raw value is kept (`test_variance_raw`) and
`negative_test_variance` says so for a report to print.

Fewer than three seeds decide nothing. With one seed in a member its training variance is
unknown; with two it is estimated on one degree of freedom: the old df rejected a true null
9.9-12.5% of the time at alpha 0.05 with two seeds (issue 44), and a t quantile on about one
degree of freedom (12.7 at 95%) leaves almost nothing decidable. A member needs at least
MIN_SEEDS = 3 seeds (the paired test 3 runs), else the result is undecided (no p, no interval;
`undecided_reason` says why).

Scores are corpus-level from per-sentence sufficient statistics (summed, then scored), so BLEU
and AER are resampled as sacreBLEU and AER define them, not as means of sentence scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as distributions

# stats summed over sentences (..., k) -> the score of each (...)
Scorer = Callable[[np.ndarray], np.ndarray]
METHOD = ("Welch's t over the seeds' scores, with the test set's sentence noise (a paired "
          "bootstrap over sentences) added to the variance")
MIN_SEEDS = 3  # per member (paired: runs); fewer decide nothing
_WORDS = {3: "three"}
PAIRED_METHOD = ("a paired t over the runs (each run read both ways), with the test set's "
                 "sentence noise (a paired bootstrap over sentences) added to the variance")


@dataclass(frozen=True)
class SeedComparison:
    """A against B on one metric across seeds: the seeds' mean scores, their difference
    (A - B), its standard error and degrees of freedom (None with fewer than MIN_SEEDS = 3 seeds
    in a member: the training variance is then unknown or barely measured, and nothing is
    decided), the seeds' standard deviations, the test set's share of the variance (truncated at
    zero) and its raw estimate (`test_variance_raw`, negative where the estimate was; None in a
    record made by hand)."""

    mean_a: float
    mean_b: float
    seeds_a: int
    seeds_b: int
    sd_a: float
    sd_b: float
    test_variance: float
    standard_error: float | None
    df: float | None
    test_variance_raw: float | None = None

    @property
    def difference(self) -> float:
        return self.mean_a - self.mean_b

    @property
    def decided(self) -> bool:
        """Whether a test is made: both members have at least MIN_SEEDS (3) seeds (the paired
        test: 3 runs); fewer decide nothing."""
        return (self.standard_error is not None and self.df is not None
                and min(self.seeds_a, self.seeds_b) >= MIN_SEEDS)

    @property
    def undecided_reason(self) -> str | None:
        """Why nothing is decided ("fewer than three seeds in a member (2 and 3 seeds)"), None
        when decided."""
        if self.decided:
            return None
        return (f"fewer than {_WORDS.get(MIN_SEEDS, MIN_SEEDS)} seeds in a member "
                f"({self.seeds_a} and {self.seeds_b} seeds): too few to measure the training "
                f"variance")

    @property
    def negative_test_variance(self) -> bool:
        """Whether the test set's variance component was estimated negative (and truncated at
        zero in `test_variance`)."""
        return self.test_variance_raw is not None and self.test_variance_raw < 0

    @property
    def test_variance_note(self) -> str | None:
        """A line for a report when the test variance's estimate came out negative."""
        if not self.negative_test_variance:
            return None
        return (f"the test set's variance component was estimated negative "
                f"({self.test_variance_raw:.3g}) and truncated at zero (the usual REML-like "
                f"choice)")

    def interval(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """The confidence interval of A - B; None when undecided."""
        if not self.decided or self.standard_error is None or self.df is None:
            return None
        if self.standard_error == 0:
            return (self.difference, self.difference)
        half = float(distributions.t.ppf(0.5 + confidence / 2, self.df)) * self.standard_error
        return (self.difference - half, self.difference + half)

    @property
    def p_value(self) -> float | None:
        """Two-sided p of "no difference"; a zero difference has p = 1 (ties count as at least as
        extreme); None when undecided."""
        if not self.decided or self.standard_error is None or self.df is None:
            return None
        if self.difference == 0:
            return 1.0
        if self.standard_error == 0:
            return 0.0
        t = abs(self.difference) / self.standard_error
        return float(2 * distributions.t.sf(t, self.df))

    def significant(self, alpha: float = 0.05) -> bool:
        p = self.p_value
        return p is not None and p < alpha

    def equivalence(self, margin: float, alpha: float = 0.05) -> str:
        """"A matches B within `margin`" by two one-sided tests (Schuirmann 1987): "equivalent"
        when the 1 - 2 alpha interval of A - B lies inside (-margin, margin); "different" when
        the 1 - alpha interval lies wholly beyond it (each a test at level alpha);
        "inconclusive" otherwise or when undecided."""
        if margin <= 0:
            raise ValueError(f"an equivalence margin must be positive, got {margin}")
        inner, outer = self.interval(1 - 2 * alpha), self.interval(1 - alpha)
        if inner is None or outer is None:
            return "inconclusive"
        if -margin < inner[0] and inner[1] < margin:
            return "equivalent"
        if outer[0] >= margin or outer[1] <= -margin:
            return "different"
        return "inconclusive"

    def noninferiority(self, margin: float, alpha: float = 0.05,
                       lower_is_better: bool = False) -> str:
        """"A is no worse than B by more than `margin`" (a non-inferiority test, one side of
        the two one-sided tests): "no worse" when the 1 - 2 alpha interval of A's gain over B
        (A - B, or B - A where lower is better) lies above -margin, a test at level alpha;
        "worse" when its 1 - alpha interval lies wholly below -margin; "inconclusive" otherwise
        or when undecided. A gain of any size is no loss: unlike equivalence, A may be better."""
        if margin <= 0:
            raise ValueError(f"a non-inferiority margin must be positive, got {margin}")
        inner, outer = self.interval(1 - 2 * alpha), self.interval(1 - alpha)
        if inner is None or outer is None:
            return "inconclusive"
        sign = -1.0 if lower_is_better else 1.0
        inner_low = min(sign * inner[0], sign * inner[1])
        outer_high = max(sign * outer[0], sign * outer[1])
        if inner_low > -margin:
            return "no worse"
        if outer_high <= -margin:
            return "worse"
        return "inconclusive"

    def seeds_needed(self, effect: float, alpha: float = 0.05, power: float = 0.8
                     ) -> int | None:
        """Seeds per member for a difference of `effect` to be found with `power` at the seeds'
        observed spread (normal approximation); None when the test set's noise alone is too
        large (more seeds cannot help: a larger test set can), or undecided. Never fewer than
        MIN_SEEDS: fewer decide nothing."""
        if not self.decided or effect == 0:
            return None
        needed_se = abs(effect) / (distributions.norm.ppf(1 - alpha / 2)
                                   + distributions.norm.ppf(power))
        room = needed_se ** 2 - self.test_variance
        if room <= 0:
            return None
        return max(MIN_SEEDS, math.ceil((self.sd_a ** 2 + self.sd_b ** 2) / room))


def seed_scores(stats: np.ndarray, score: Scorer) -> np.ndarray:
    """The corpus score of each seed: stats (seeds, sentences, k) -> (seeds,)."""
    return np.asarray(score(np.asarray(stats).sum(axis=1)), dtype=float)


def compare_across_seeds(stats_a: np.ndarray, stats_b: np.ndarray, score: Scorer, *,
                         samples: int = 1000, seed: int = 12345) -> SeedComparison:
    """A against B across seeds (see the module's docstring).

    stats_a (seeds_a, n, k), stats_b (seeds_b, n, k): each run's per-sentence sufficient
    statistics on the same n test sentences (BLEU's n-gram counts, AER's link counts, an exact
    match's 0/1...); score: summed statistics (..., k) -> scores (...). samples: bootstrap
    resamples of the sentences for the test-set variance; seed: their random generator's."""
    a, b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    if a.ndim != 3 or b.ndim != 3 or a.shape[1:] != b.shape[1:] or 0 in a.shape + b.shape:
        raise ValueError(f"need (seeds, sentences, k) statistics of the same sentences for A and "
                         f"B, got {a.shape} and {b.shape}")
    scores_a, scores_b = seed_scores(a, score), seed_scores(b, score)
    raw = _test_variance(a, b, score, samples, seed)
    test_variance = max(0.0, raw)    # truncated at zero (the usual REML-like choice)
    n_a, n_b = len(scores_a), len(scores_b)
    sd_a = float(scores_a.std(ddof=1)) if n_a > 1 else 0.0
    sd_b = float(scores_b.std(ddof=1)) if n_b > 1 else 0.0
    error: float | None
    df: float | None
    if min(n_a, n_b) < MIN_SEEDS:
        error = df = None
    else:
        seed_a, seed_b = sd_a ** 2 / n_a, sd_b ** 2 / n_b
        error = math.sqrt(seed_a + seed_b + test_variance)
        df = _welch_df(seed_a, seed_b, n_a, n_b, test_variance)
    return SeedComparison(float(scores_a.mean()), float(scores_b.mean()), n_a, n_b, sd_a, sd_b,
                          test_variance, error, df, raw)


def compare_paired_across_seeds(stats_a: np.ndarray, stats_b: np.ndarray, score: Scorer, *,
                                samples: int = 1000, seed: int = 12345) -> SeedComparison:
    """A against B where A's run s and B's run s are one training run read two ways (two
    readings of one model's links, say): the paired counterpart of compare_across_seeds.

    Each run's difference d_s = score(a_s) - score(b_s); D = mean(d). Var(D) = Var(d) / n (the
    seeds' spread of the difference: what the two readings share, the run's own training luck,
    cancels) + what the drawn sentences add beyond it (the same bootstrap, of mean(d), less the
    runs' own sentence noise of d). D / sqrt(Var(D)) is referred to Student's t with the
    Satterthwaite degrees of freedom of n - 1 for the seeds' term (the test term counts as
    known). With no test variance this is the paired t-test (scipy.stats.ttest_rel)."""
    a, b = np.asarray(stats_a, dtype=float), np.asarray(stats_b, dtype=float)
    if a.ndim != 3 or a.shape != b.shape or 0 in a.shape:
        raise ValueError(f"need (seeds, sentences, k) statistics of the same runs and sentences "
                         f"for A and B, got {a.shape} and {b.shape}")
    scores_a, scores_b = seed_scores(a, score), seed_scores(b, score)
    runs = len(scores_a)
    resampled_a, resampled_b = _resampled(a, b, score, samples, seed)
    paired = resampled_a - resampled_b                                   # (samples, seeds)
    raw = 0.0 if samples < 2 else (
        float(paired.mean(axis=1).var(ddof=1))
        - _own_noise(paired - paired.mean(axis=1, keepdims=True)))
    test_variance = max(0.0, raw)    # truncated at zero (the usual REML-like choice)
    sd_a = float(scores_a.std(ddof=1)) if runs > 1 else 0.0
    sd_b = float(scores_b.std(ddof=1)) if runs > 1 else 0.0
    error: float | None
    df: float | None
    if runs < MIN_SEEDS:
        error = df = None
    else:
        seed_term = float((scores_a - scores_b).var(ddof=1)) / runs
        error = math.sqrt(seed_term + test_variance)
        df = _welch_df(seed_term, 0.0, runs, runs, test_variance)   # one seeds' term: n - 1
    return SeedComparison(float(scores_a.mean()), float(scores_b.mean()), runs, runs, sd_a, sd_b,
                          test_variance, error, df, raw)


def _resampled(a: np.ndarray, b: np.ndarray, score: Scorer, samples: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every run's score on each bootstrap resample of the sentences (the same resamples for
    every run of both): (samples, seeds_a) and (samples, seeds_b)."""
    n = a.shape[1]
    rng = np.random.default_rng(seed)
    scores_a = np.empty((samples, a.shape[0]))
    scores_b = np.empty((samples, b.shape[0]))
    for start in range(0, samples, 64):  # (64, n) indices at a time
        count = min(64, samples - start)
        # each resample as counts per sentence: summing stats is then one matrix product
        # (one draw of (count, n) is the same numbers as count draws of n)
        drawn = rng.integers(0, n, (count, n)) + n * np.arange(count)[:, None]
        weights = np.bincount(drawn.ravel(), minlength=count * n).reshape(count, n)
        weights = weights.astype(float)                               # (count, n)
        block = slice(start, start + count)
        scores_a[block] = score(np.einsum("rn,snk->rsk", weights, a))
        scores_b[block] = score(np.einsum("rn,snk->rsk", weights, b))
    return scores_a, scores_b


def _test_variance(a: np.ndarray, b: np.ndarray, score: Scorer, samples: int,
                   seed: int) -> float:
    """What the drawn sentences add to the variance of mean(a) - mean(b), beyond the seeds'
    spread: the variance of that difference over bootstrap resamples of the sentences (the same
    sentences for every run of both members), less each member's per-run sentence noise, which
    the seeds' spread already holds (each run's own luck on the drawn sentences). That noise is
    estimated from the runs' deviations from their member's mean in the same resamples:
    sum_s Var(x_s - mean(x)) / (k (k - 1)) = Var(mean of the k runs' own noise). Raw: it may
    come out negative (the caller truncates it at zero and keeps this value)."""
    if samples < 2:
        return 0.0
    scores_a, scores_b = _resampled(a, b, score, samples, seed)
    differences = scores_a.mean(axis=1) - scores_b.mean(axis=1)
    own = sum(_own_noise(scores - scores.mean(axis=1, keepdims=True))
              for scores in (scores_a, scores_b))
    return float(differences.var(ddof=1)) - own


def _own_noise(deviations: np.ndarray) -> float:
    """Var of the mean of k runs' own sentence noise, from their deviations (samples, k)."""
    k = deviations.shape[1]
    if k < 2:
        return 0.0
    return float(deviations.var(axis=0, ddof=1).sum()) / (k * (k - 1))


def _welch_df(seed_a: float, seed_b: float, n_a: int, n_b: int, test: float = 0.0) -> float:
    """Welch-Satterthwaite degrees of freedom of the seeds' terms alone:
    (seed_a + seed_b)^2 / (seed_a^2 / (n_a - 1) + seed_b^2 / (n_b - 1)). The test-set term
    `test` never raises them (it is an estimate too; counted as known it inflated the df and the
    test's level, issue 44): it widens the standard error only. The paired test has one seeds'
    term, seed_b = 0: n_a - 1. With no seed spread at all (both terms 0) the df are infinite."""
    del test  # kept in the signature: the cap at the seeds-only df ignores it by design
    denominator = seed_a ** 2 / (n_a - 1) + seed_b ** 2 / (n_b - 1)
    if denominator == 0:
        return float("inf")
    return (seed_a + seed_b) ** 2 / denominator


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment (Holm 1979) of a family of p-values, for comparing the
    adjusted values with alpha; None (undecided) stays None and is not counted."""
    decided = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, index) in enumerate(decided):
        running = max(running, min(1.0, (len(decided) - rank) * p))
        adjusted[index] = running
    return adjusted


def mean_scorer(sums: np.ndarray) -> np.ndarray:
    """A mean per sentence (exact match, a sentence score): stats (..., 2) of (value, 1)."""
    return sums[..., 0] / sums[..., 1]


def aer_scorer(sums: np.ndarray) -> np.ndarray:
    """AER from summed `aer_counts` columns (|A & S|, |A & P|, |A|, |S|)."""
    return 1.0 - (sums[..., 0] + sums[..., 1]) / (sums[..., 2] + sums[..., 3])
