"""Calibration of attnlab's significance tests: how often each rejects a true null at alpha = 0.05
(says "different", "equivalent" or "no worse" when it should not), cell by cell, over the
settings the suites live in.

    OMP_NUM_THREADS=1 python benchmarks/calibration.py            # the default table, minutes
    OMP_NUM_THREADS=1 python benchmarks/calibration.py --sims 2000 --samples 1000 --power \\
        --old-sims 200 --sacrebleu 20                               # the full table, hours

Simulated test sets of n = 200 sentences, two members A and B, `seeds` training runs each. Run s
of a member scores sentence i through a latent value

    z[s, i] = shift + u_s + v_i + w_i + e_si,

u_s the seed's effect (training variance; sd tau_A for A, tau_B for B), v_i the sentence's
difficulty (sd 1, shared by both members), w_i the member's own per-sentence effect (sd 0.3, drawn
once per member per test set), e_si the run's noise on the sentence (sd 0.3). Three metrics:

- a mean metric (exact match, a sentence score): stats (z, 1), `mean_scorer`;
- AER-like link counts: sentence i has S_i = 3 + Poisson(5) sure gold links and the system
  predicts S_i links, each sure with probability sigmoid(1 + z), a non-sure one possible with
  probability 0.25; counts (|A&S|, |A&P|, |A|, |S|), `aer_scorer`; lower is better;
- BLEU from real sacreBLEU sentence statistics: a bank of 600 references (8-14 random words) and,
  for each, hypotheses made by replacing each word with a random one with probability
  sigmoid(logit(0.2) + g) on a grid of g (-3 to 3 by 0.25, 4 hypotheses per level), each turned
  into sacreBLEU's sentence statistics (`BLEU()._extract_corpus_statistics`: lengths and n-gram
  counts); a test set is 200 of the 600, and run s's sentence i takes the statistics of a random
  hypothesis at level z[s, i] (stochastically rounded between grid levels), so the corpus BLEU
  of a run is sacreBLEU's on real sentence statistics; lower z is better.

The seeds' spreads: the larger, tau_A, is 0.2x, 1x or 5x the test noise (what the drawn sentences
add to one run's score beyond what both members share: the sd over test sets of the difference
of two runs, one of each member, no seed effect, over sqrt(2); test noise from 5x to 0.2x the
seeds' spread), the other tau_B = tau_A / ratio,
ratio 1, 3 or 10. Under a null the members' expected scores are equal: where the metric is not
linear in z (AER, BLEU) A's shift is solved for that (Gauss-Hermite over u, the expected score on
a large pool of sentences), and the table shows the realised mean difference in standard errors
of D (the sd of D over the cell's null simulations) to check it.

Cells (every one: seeds 2, 3, 5, 10; every ratio and tau; every metric):
- across seeds: `compare_across_seeds`, p < 0.05 under the null (A and B exchangeable in mean);
  with --power also the rate at an effect of 3 SE of D in the right direction;
- equivalence (TOST, `.equivalence(margin)`) and non-inferiority (`.noninferiority(margin)`, for
  AER `lower_is_better=True`): A truly worse than B by exactly the margin (the boundary of both
  nulls), margin = 3 SE of D from the across-seed cell's null simulations; "rejects" counts
  "equivalent" and "no worse";
- paired: `compare_paired_across_seeds` on two readings of the same runs (each run's seed effect
  shared, sd 5x the test noise, plus a reading's own seed effect, sd tau_A for A and tau_B for B,
  its own w and e), p < 0.05 under the null;
- two seeds decide nothing (attnlab needs 3): their cells run --two-seed-sims simulations and
  must read 0;
- the old rule (what the across-seed test replaced): seed s of A against seed s of B with the
  paired bootstrap (`per_seed_rule.aer_pair_test`), a direction when a strict majority of seeds
  say so (`per_seed_rule.seed_verdict`); mean metric (as counts (Kx, Kx, K, K), K = 1000) and
  AER, 3 and 5 seeds, equal spreads, --old-sims simulations; and a paired bootstrap within one
  seed alone, tau = 0, the test each old verdict counted;
- with --sacrebleu N: sacreBLEU's paired bootstrap and approximate randomisation (1000 each, as
  `per_seed_rule.text_pair_test` runs them) on N pairs of simulated texts from one generator.

"MC se" is the Monte Carlo standard error of the rate, sqrt(r (1 - r) / sims). A cell is flagged
"ABOVE" when its rate exceeds alpha + 2 max(MC se, sqrt(alpha (1 - alpha) / sims)). With many
cells a few flags are expected by chance even at the exact level (about 2% of cells); a flag
that stays at more simulations is a failure.
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from attnlab.compare.stats.across_seeds import (
    SeedComparison,
    aer_scorer,
    compare_across_seeds,
    compare_paired_across_seeds,
    mean_scorer,
)
from common import listed, number, subset, whole_number  # benchmarks/, beside this file
from per_seed_rule import aer_pair_test, seed_verdict  # benchmarks/, beside this file

ALPHA = 0.05
N = 200
SD_V, SD_W, SD_E = 1.0, 0.3, 0.3
LOGIT, POSSIBLE = 1.0, 0.25
SCALE = 1000  # the mean metric as AER counts (Kx, Kx, K, K)
SHARED = 5.0  # the paired readings' shared seed effect, in test noises
SEEDS, RATIOS, TAUS = (2, 3, 5, 10), (1.0, 3.0, 10.0), (0.2, 1.0, 5.0)
MIN_DECIDING = 3

WORDS = ("a man woman dog child in on the with red blue shirt is riding running bike street "
         "park ball two three people near water green small big").split()
BANK_SENTENCES, BANK_DRAWS = 600, 4
BANK_GRID = np.arange(-3.0, 3.0 + 1e-9, 0.25)
BASE_REPLACE = math.log(0.2 / 0.8)
POOL = 20000  # sentences in the pool that gives a metric's expected score

Pair = tuple[np.ndarray, np.ndarray]


def bleu_scorer(sums: np.ndarray) -> np.ndarray:
    """sacreBLEU's corpus BLEU (smooth "exp", effective_order=False) from summed sentence
    statistics (..., 10) = (hyp_len, ref_len, correct 1-4, total 1-4), vectorised; a row with a
    zero count goes to sacreBLEU itself."""
    sums = np.asarray(sums, dtype=float)
    hyp, ref = sums[..., 0], sums[..., 1]
    correct, total = sums[..., 2:6], sums[..., 6:10]
    bad = (correct <= 0).any(axis=-1) | (total <= 0).any(axis=-1) | (hyp <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_precision = np.log(100.0 * correct / total).mean(axis=-1)
        penalty = np.where(hyp < ref, np.exp(1.0 - ref / hyp), 1.0)
        scores = penalty * np.exp(log_precision)
    if bad.any():
        from sacrebleu.metrics import BLEU

        scorer = BLEU(effective_order=False)
        scores = np.where(bad, 0.0, scores)
        for index in zip(*np.nonzero(bad), strict=True):
            scores[index] = scorer._compute_score_from_stats(list(sums[index])).score
    return scores


@functools.cache
def bleu_bank(seed: int = 0, sentences: int = BANK_SENTENCES) -> np.ndarray:
    """sacreBLEU sentence statistics (sentences, levels, draws, 10) of simulated hypotheses."""
    from sacrebleu.metrics import BLEU

    generator = random.Random(seed)
    references = [" ".join(generator.choices(WORDS, k=generator.randint(8, 14)))
                  for _ in range(sentences)]
    hypotheses, refs = [], []
    for reference in references:
        for g in BANK_GRID:
            rate = 1 / (1 + math.exp(-(BASE_REPLACE + g)))
            for _ in range(BANK_DRAWS):
                hypotheses.append(" ".join(generator.choice(WORDS) if generator.random() < rate
                                           else word for word in reference.split()))
                refs.append(reference)
    found = BLEU(effective_order=False)._extract_corpus_statistics(hypotheses, [refs])
    return np.asarray(found, dtype=float).reshape(sentences, len(BANK_GRID), BANK_DRAWS, 10)


@dataclass
class Metric:
    """A simulated metric: its test sets, a run's statistics from latent values, its scorer,
    and its expected score at a latent shift (for the nulls of nonlinear metrics)."""

    name: str
    scorer: Callable[[np.ndarray], np.ndarray]
    lower_is_better: bool
    test_set: Callable[[np.random.Generator], dict]
    stats: Callable[[np.random.Generator, dict, np.ndarray], np.ndarray]  # latent (runs, n)
    expected: Callable[[np.ndarray], np.ndarray]    # shifts (m,) -> expected score (m,)
    as_counts: Callable[[np.ndarray], np.ndarray] | None = None  # for the old rule
    test_noise: float = 0.0
    slope: float = 1.0   # d expected score / d shift at 0
    cache: dict = field(default_factory=dict)

    def calibrate(self, rng: np.random.Generator, repeats: int = 1000) -> None:
        """The test noise and the slope. Test noise: what the drawn sentences add to one run's
        score beyond what two members share (the sentences' difficulty v): the sd over test sets
        of the difference of two runs, one of each member, with no seed effect, over sqrt(2)."""
        differences = []
        for _ in range(repeats):
            a, b = self.simulate(rng, 1, 0.0, 0.0, 0.0)
            differences.append(float(np.diff(self.scorer(np.stack([b[0], a[0]]).sum(axis=1)))[0]))
        self.test_noise = float(np.std(differences)) / math.sqrt(2)
        low, high = self.expected(np.array([-0.05, 0.05]))
        self.slope = float(high - low) / 0.1

    def latent_sd(self, multiple: float) -> float:
        """A spread of `multiple` test noises in the score, on the latent scale."""
        return multiple * self.test_noise / abs(self.slope)

    def mean_score(self, shift: float, sd: float) -> float:
        """E[score] of a run whose latent shift is shift + u, u ~ N(0, sd)."""
        nodes, weights = np.polynomial.hermite.hermgauss(21)
        values = self.expected(shift + math.sqrt(2) * sd * nodes)
        return float(np.sum(weights * values) / math.sqrt(math.pi))

    def shift_for(self, difference: float, sd_a: float, sd_b: float) -> float:
        """A's latent shift such that E[A] - E[B] = difference (B's shift 0)."""
        key = (round(difference, 12), round(sd_a, 12), round(sd_b, 12))
        if key not in self.cache:
            target = self.mean_score(0.0, sd_b) + difference
            self.cache[key] = float(optimize.brentq(
                lambda c: self.mean_score(c, sd_a) - target, -6.0, 6.0, xtol=1e-10))
        return self.cache[key]

    def simulate(self, rng: np.random.Generator, seeds: int, sd_a: float, sd_b: float,
                 shift: float, *, paired: bool = False, shared: float = 0.0) -> Pair:
        """Stats (seeds, N, k) of A and B on one test set (A's latent shift `shift`); paired:
        two readings of the same runs, which share a seed effect of sd `shared`."""
        context = self.test_set(rng)
        common = rng.normal(0.0, shared, (seeds, 1)) if paired else 0.0
        runs = []
        for effect, sd in ((shift, sd_a), (0.0, sd_b)):
            latent = (effect + common + rng.normal(0.0, sd, (seeds, 1)) + context["v"]
                      + rng.normal(0.0, SD_W, N) + rng.normal(0.0, SD_E, (seeds, N)))
            runs.append(self.stats(rng, context, latent))
        return runs[0], runs[1]


def _pool(seed: int = 1) -> np.ndarray:
    """Latent sentence values (POOL,) without seed effect: v + w + e."""
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, SD_V, POOL) + rng.normal(0.0, SD_W, POOL) + rng.normal(0.0, SD_E, POOL)


# --- mean metric ----------------------------------------------------------------------------

def mean_metric() -> Metric:
    def stats(rng: np.random.Generator, context: dict, latent: np.ndarray) -> np.ndarray:
        return np.stack([latent, np.ones_like(latent)], axis=-1)

    def counts(run: np.ndarray) -> np.ndarray:
        q = np.rint(SCALE * run[:, 0]).astype(np.int64)
        k = np.full(len(q), SCALE, dtype=np.int64)
        return np.stack([q, q, k, k], axis=1)

    return Metric("mean metric", mean_scorer, False,
                  lambda rng: {"v": rng.normal(0.0, SD_V, N)}, stats,
                  lambda shifts: np.asarray(shifts, dtype=float), counts)


# --- AER --------------------------------------------------------------------------------------

def aer_metric() -> Metric:
    pool = _pool(2)
    sure_pool = 3 + np.random.default_rng(3).poisson(5, POOL)

    def test_set(rng: np.random.Generator) -> dict:
        return {"v": rng.normal(0.0, SD_V, N), "sure": 3 + rng.poisson(5, N)}

    def stats(rng: np.random.Generator, context: dict, latent: np.ndarray) -> np.ndarray:
        sure = np.broadcast_to(context["sure"], latent.shape)
        hits = rng.binomial(sure, 1 / (1 + np.exp(-(LOGIT + latent))))
        possible = hits + rng.binomial(sure - hits, POSSIBLE)
        return np.stack([hits, possible, sure, sure], axis=-1).astype(float)

    def expected(shifts: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-(LOGIT + pool[None] + np.asarray(shifts, dtype=float)[:, None])))
        hits = sure_pool * p
        linked = 2 * hits + POSSIBLE * (sure_pool - hits)
        return 1.0 - linked.sum(axis=1) / (2.0 * sure_pool.sum())

    return Metric("AER counts", aer_scorer, True, test_set, stats, expected,
                  lambda run: run.astype(np.int64))


# --- BLEU from sacreBLEU sentence statistics ---------------------------------------------------

def _levels(latent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grid level below a latent value and the share of the next one (clipped to the grid)."""
    position = np.clip((latent - BANK_GRID[0]) / (BANK_GRID[1] - BANK_GRID[0]), 0,
                       len(BANK_GRID) - 1 - 1e-9)
    low = np.floor(position).astype(int)
    return low, position - low


def bleu_metric(bank_seed: int = 0, sentences: int = BANK_SENTENCES) -> Metric:
    bank = bleu_bank(bank_seed, sentences)
    means = bank.mean(axis=2)                                    # (sentences, levels, 10)
    pool = _pool(4)
    pool_sentences = np.random.default_rng(5).integers(0, sentences, POOL)

    def test_set(rng: np.random.Generator) -> dict:
        return {"v": rng.normal(0.0, SD_V, N),
                "sentences": rng.choice(sentences, N, replace=sentences < N)}

    def stats(rng: np.random.Generator, context: dict, latent: np.ndarray) -> np.ndarray:
        low, share = _levels(latent)
        level = low + (rng.random(latent.shape) < share)
        draw = rng.integers(0, BANK_DRAWS, latent.shape)
        sentences = np.broadcast_to(context["sentences"], latent.shape)
        return bank[sentences, level, draw]

    def expected(shifts: np.ndarray) -> np.ndarray:
        values = []
        for shift in np.asarray(shifts, dtype=float):
            low, share = _levels(pool + shift)
            summed = ((1 - share)[:, None] * means[pool_sentences, low]
                      + share[:, None] * means[pool_sentences, low + 1]).sum(axis=0)
            values.append(float(bleu_scorer(summed)))
        return np.asarray(values)

    return Metric("BLEU (sacreBLEU stats)", bleu_scorer, False, test_set, stats, expected)


# --- the cells ----------------------------------------------------------------------------------

def rate_cells(hits: int, sims: int) -> str:
    rate = hits / sims if sims else float("nan")
    se = math.sqrt(rate * (1 - rate) / sims) if sims else float("nan")
    bound = ALPHA + 2 * max(se, math.sqrt(ALPHA * (1 - ALPHA) / sims)) if sims else 1.0
    flag = "ABOVE" if sims and rate > bound else ""
    return f"{sims} | {rate:.3f} | {se:.3f} | {flag}"


@dataclass
class Cell:
    metric: Metric
    seeds: int
    ratio: float
    tau: float

    @property
    def sd_a(self) -> float:
        return self.metric.latent_sd(self.tau)

    @property
    def sd_b(self) -> float:
        return self.metric.latent_sd(self.tau / self.ratio)

    def label(self, test: str) -> str:
        return (f"| {test} | {self.metric.name} | {self.seeds} | {self.ratio:g} | "
                f"{self.tau:g}x")


def sims_for(seeds: int, sims: int, args: argparse.Namespace) -> int:
    return min(sims, args.two_seed_sims) if seeds < MIN_DECIDING else sims


def across(cell: Cell, args: argparse.Namespace, rng: np.random.Generator
           ) -> tuple[list[str], float]:
    """The across-seed test under the null (and at 3 SE with --power); returns the rows and the
    SE of D (sd of D over the null simulations)."""
    metric, sims = cell.metric, sims_for(cell.seeds, args.sims, args)
    shift = metric.shift_for(0.0, cell.sd_a, cell.sd_b)
    rejected, differences = 0, []
    for _ in range(sims):
        a, b = metric.simulate(rng, cell.seeds, cell.sd_a, cell.sd_b, shift)
        result = compare_across_seeds(a, b, metric.scorer, samples=args.samples,
                                      seed=int(rng.integers(1, 2 ** 31)))
        rejected += result.significant(ALPHA)
        differences.append(result.difference)
    se = float(np.std(differences))
    bias = float(np.mean(differences)) / se if se else 0.0
    power = ""
    if args.power:
        gap = 3 * se * (-1 if metric.lower_is_better else 1)   # A better by 3 SE
        shift_effect = metric.shift_for(gap, cell.sd_a, cell.sd_b)
        found = 0
        for _ in range(sims):
            a, b = metric.simulate(rng, cell.seeds, cell.sd_a, cell.sd_b, shift_effect)
            result = compare_across_seeds(a, b, metric.scorer, samples=args.samples,
                                          seed=int(rng.integers(1, 2 ** 31)))
            found += result.significant(ALPHA) and result.difference * gap > 0
        power = f"{found / sims:.3f}" if sims else ""
    return [f"{cell.label('across seeds: p < 0.05')} | null | {rate_cells(rejected, sims)} | "
            f"{bias:+.2f} | {power} |"], se


def margins(cell: Cell, se: float, args: argparse.Namespace, rng: np.random.Generator
            ) -> list[str]:
    """TOST and non-inferiority at their nulls' boundary: A worse than B by exactly the margin,
    3 SE of D."""
    metric, sims = cell.metric, sims_for(cell.seeds, args.margin_sims, args)
    margin = 3 * se
    worse = margin if metric.lower_is_better else -margin
    shift = metric.shift_for(worse, cell.sd_a, cell.sd_b)
    equivalent = no_worse = 0
    differences = []
    for _ in range(sims):
        a, b = metric.simulate(rng, cell.seeds, cell.sd_a, cell.sd_b, shift)
        result = compare_across_seeds(a, b, metric.scorer, samples=args.samples,
                                      seed=int(rng.integers(1, 2 ** 31)))
        equivalent += result.equivalence(margin, ALPHA) == "equivalent"
        no_worse += result.noninferiority(margin, ALPHA, metric.lower_is_better) == "no worse"
        differences.append(result.difference)
    realised = (float(np.mean(differences)) - worse) / se if sims and se else 0.0
    return [f"{cell.label(test)} | A worse by the margin (3 SE) | {rate_cells(hits, sims)} | "
            f"{realised:+.2f} | |"
            for test, hits in (("equivalence (TOST): equivalent", equivalent),
                               ("non-inferiority: no worse", no_worse))]


def paired(cell: Cell, args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    """Two readings of the same runs under the null."""
    metric, sims = cell.metric, sims_for(cell.seeds, args.paired_sims, args)
    shared = metric.latent_sd(SHARED)
    shift = metric.shift_for(0.0, math.hypot(shared, cell.sd_a), math.hypot(shared, cell.sd_b))
    rejected, differences = 0, []
    for _ in range(sims):
        a, b = metric.simulate(rng, cell.seeds, cell.sd_a, cell.sd_b, shift, paired=True,
                               shared=shared)
        result: SeedComparison = compare_paired_across_seeds(
            a, b, metric.scorer, samples=args.samples, seed=int(rng.integers(1, 2 ** 31)))
        rejected += result.significant(ALPHA)
        differences.append(result.difference)
    se = float(np.std(differences))
    bias = float(np.mean(differences)) / se if se else 0.0
    return [f"{cell.label('paired readings: p < 0.05')} | null | "
            f"{rate_cells(rejected, sims)} | {bias:+.2f} | |"]


def old_rule(metric: Metric, a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> float:
    """+1 / -1 when the majority of per-seed paired bootstraps says A is higher / lower, else 0."""
    assert metric.as_counts is not None
    results = [aer_pair_test(metric.as_counts(run_a), metric.as_counts(run_b), samples=samples,
                             seed=seed + index)
               for index, (run_a, run_b) in enumerate(zip(a, b, strict=True))]
    # aer_pair_test's "difference" is a's AER - b's; lower_is_better=True: ">" means A is lower
    direction = seed_verdict(results, ALPHA, lower_is_better=True)[0]
    sign = {">": -1.0, "<": 1.0, "=": 0.0}[direction]
    return sign if metric.lower_is_better else -sign  # 1 - AER is the mean


def old_rows(metric: Metric, args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    rows = []
    sims = args.old_sims
    for seeds in (3, 5):
        for tau in (0.2, 5.0):
            cell = Cell(metric, seeds, 1.0, tau)
            rejected = 0
            for _ in range(sims):
                a, b = metric.simulate(rng, seeds, cell.sd_a, cell.sd_b, 0.0)
                rejected += old_rule(metric, a, b, 1000, int(rng.integers(1, 2 ** 31))) != 0
            rows.append(f"{cell.label('old rule: majority of per-seed bootstraps')} | null | "
                        f"{rate_cells(rejected, sims)} | | |")
    rejected = 0
    for _ in range(sims):
        a, b = metric.simulate(rng, 1, 0.0, 0.0, 0.0)
        assert metric.as_counts is not None
        rejected += aer_pair_test(metric.as_counts(a[0]), metric.as_counts(b[0]), samples=1000,
                                  seed=int(rng.integers(1, 2 ** 31))).significant(ALPHA)
    rows.append(f"| paired bootstrap within one seed (aer_pair_test) | {metric.name} | 1 | 1 | "
                f"0x | null | {rate_cells(rejected, sims)} | | |")
    return rows


def sacrebleu_rows(pairs: int, rng: np.random.Generator) -> list[str]:
    """sacreBLEU's paired tests on `pairs` pairs of exchangeable simulated systems."""
    from per_seed_rule import text_pair_test

    rejected = {"bs": 0, "ar": 0}
    for _ in range(pairs):
        generator = random.Random(int(rng.integers(2 ** 31)))
        references = [" ".join(generator.choices(WORDS, k=generator.randint(8, 14)))
                      for _ in range(N)]
        systems = [[" ".join(generator.choice(WORDS) if generator.random() < 0.2 else word
                             for word in sentence.split()) for sentence in references]
                   for _ in range(2)]
        for method in rejected:
            result = text_pair_test(systems[0], systems[1], [references], method=method,
                                    samples=1000, seed=int(rng.integers(1, 2 ** 31)))
            rejected[method] += result["bleu"].significant(ALPHA)
    return [f"| sacreBLEU {name} (one run each) | BLEU (texts) | 1 | 1 | 0x | null | "
            f"{rate_cells(rejected[method], pairs)} | | |"
            for method, name in (("bs", "paired bootstrap"), ("ar", "approximate randomisation"))]


def cells(metrics: list[Metric], args: argparse.Namespace) -> Iterator[Cell]:
    for metric in metrics:
        for seeds in args.seeds:
            for ratio in args.ratios:
                for tau in args.taus:
                    yield Cell(metric, seeds, ratio, tau)


METRICS, TESTS = ("mean", "aer", "bleu"), ("across", "margins", "paired", "old")


def arguments() -> argparse.ArgumentParser:
    """The options, each number checked for its range as it is parsed (common's types)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # a rejection rate over fewer than 2 simulations, or a bootstrap of one resample, says nothing
    sims = whole_number(2)
    parser.add_argument("--sims", type=sims, default=100,
                        help="simulations per across-seed cell (default 100)")
    parser.add_argument("--margin-sims", type=sims, default=None,
                        help="per equivalence / non-inferiority cell (default: --sims)")
    parser.add_argument("--paired-sims", type=sims, default=None,
                        help="per paired cell (default: --sims)")
    parser.add_argument("--two-seed-sims", type=sims, default=20,
                        help="per two-seed cell, which decides nothing (default 20)")
    parser.add_argument("--old-sims", type=whole_number(0), default=20,
                        help="per old-rule and one-seed bootstrap cell (default 20; 0: none; slow)")
    parser.add_argument("--samples", type=whole_number(2), default=200,
                        help="bootstrap resamples in every test (default 200; attnlab's is "
                             "1000, the full table's)")
    parser.add_argument("--power", action="store_true",
                        help="also the across-seed test's power at 3 SE of D (doubles its cost)")
    parser.add_argument("--sacrebleu", type=whole_number(0), default=0, metavar="N",
                        help="also sacreBLEU's paired tests on N simulated text pairs (slow)")
    parser.add_argument("--seeds", type=listed(whole_number(2)), default=SEEDS,
                        help="seeds per member, each at least 2, comma-separated (default "
                             "2,3,5,10)")
    parser.add_argument("--ratios", type=listed(number(1.0)), default=RATIOS,
                        help="seed spread ratios tau_A / tau_B, each at least 1 (default 1,3,10)")
    parser.add_argument("--taus", type=listed(number(0.0, above=True)), default=TAUS,
                        help="tau_A in test noises, each above 0 (default 0.2,1,5)")
    parser.add_argument("--metrics", type=subset(METRICS), default=METRICS,
                        help="a subset of mean,aer,bleu (default all)")
    parser.add_argument("--tests", type=subset(TESTS), default=TESTS,
                        help="a subset of across,margins,paired,old (default all)")
    parser.add_argument("--seed", type=whole_number(0), default=0,
                        help="random seed (default 0)")
    return parser


def main() -> None:
    args = arguments().parse_args()
    args.margin_sims = args.sims if args.margin_sims is None else args.margin_sims
    args.paired_sims = args.sims if args.paired_sims is None else args.paired_sims
    tests = set(args.tests)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    makers = {"mean": mean_metric, "aer": aer_metric, "bleu": bleu_metric}
    metrics = [makers[name]() for name in args.metrics]
    for metric in metrics:
        metric.calibrate(rng)
    noises = ", ".join(f"{metric.name} {metric.test_noise:.4g} (slope {metric.slope:.3g})"
                       for metric in metrics)
    print(f"Rejections of a true null at alpha = {ALPHA}: n = {N} test sentences, "
          f"{args.samples} bootstrap resamples, seed {args.seed}; test noise (sd over test sets of "
          f"one run of A minus one of B, over sqrt 2, no seed effect): {noises}. ratio: "
          f"tau_A / tau_B; tau: tau_A in test noises. "
          f"ABOVE: rate > alpha + 2 max(MC se, se at alpha). bias: the realised mean "
          f"difference minus the intended one, in SE of D.\n")
    print("| test | metric | seeds | ratio | tau | truth | sims | rate | MC se | flag | bias | "
          "power at 3 SE |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    flagged = total = 0
    for cell in cells(metrics, args):
        rows: list[str] = []
        if tests & {"across", "margins"}:
            found, se = across(cell, args, rng)
            rows += found if "across" in tests else []
            if "margins" in tests:
                rows += margins(cell, se, args, rng)
        if "paired" in tests:
            rows += paired(cell, args, rng)
        flagged += sum("ABOVE" in row for row in rows)
        total += len(rows)
        if rows:
            print("\n".join(rows), flush=True)
    if "old" in tests:
        for metric in metrics:
            if metric.as_counts is not None and args.old_sims:
                print("\n".join(old_rows(metric, args, rng)), flush=True)
    if args.sacrebleu:
        print("\n".join(sacrebleu_rows(args.sacrebleu, rng)), flush=True)
    print(f"\n{flagged} of {total} cells of attnlab's tests flagged ABOVE. "
          f"{time.perf_counter() - start:.0f} s.")
    print("The full table: OMP_NUM_THREADS=1 python benchmarks/calibration.py --sims 2000 "
          "--samples 1000 --power --two-seed-sims 100 --old-sims 200 --sacrebleu 20")


if __name__ == "__main__":
    main()
