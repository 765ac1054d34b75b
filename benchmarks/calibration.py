"""Calibration of attnlab's significance tests: how often each says "different" at alpha = 0.05
when the two systems are exchangeable (the null is true) and when a stated effect is there.

    OMP_NUM_THREADS=1 python benchmarks/calibration.py [--sims 400] [--old-sims 100] [--seed 0]
        [--samples 1000] [--sacrebleu 0]

Simulated test sets of n = 200 sentences, two systems A and B, `seeds` training runs each.
Sentence i scored by seed s of a system:

- a mean metric (exact match, a sentence score): x[s, i] = u_s + v_i + w_i + e_si, with u_s the
  seed's effect (sd tau), v_i the sentence's difficulty (sd 1, shared by both systems), w_i the
  system's own per-sentence effect (sd 0.3, drawn once per system per test set), e_si the run's
  noise on the sentence (sd 0.3); stats (value, 1) scored by `mean_scorer`;
- AER-like link counts: sentence i has S_i = 3 + Poisson(5) sure gold links and the system
  predicts S_i links, each sure with probability p = sigmoid(1 + u_s + v_i + w_i + e_si) (the
  same terms, on the logit scale), a non-sure one possible with probability 0.25; counts
  (|A&S|, |A&P|, |A|, |S|) scored by `aer_scorer`.

tau is "small" (0.2x the test noise: the sd of one run's score over test sets) or 5x the test
noise (seeds spread far more than the test set's sentences). The stated effect is 3 standard
errors of D = mean(A's seeds) - mean(B's) (its sd over the null simulations), added to A's mean
(on the logit scale for AER, converted at AER's slope there; the table shows the difference
realised, its mean over the simulations, and it in SE). "Rate" under the effect counts only
differences found in the right direction; "MC se" is the Monte Carlo standard error
sqrt(r (1 - r) / sims).

Tests:
- across seeds: `attnlab.compare.stats.across_seeds.compare_across_seeds`, p < 0.05;
- old rule (what it replaced): seed s of A against seed s of B with the paired bootstrap
  (`per_seed_rule.aer_pair_test`, 1000 resamples), a direction when a strict majority of seeds
  say so (`per_seed_rule.seed_verdict`). For the mean metric, the counts (Kx, Kx, K, K), K = 1000,
  make 1 - AER the mean of x, so the same function runs. Fewer simulations (--old-sims): its
  rates are far from alpha;
- a paired bootstrap within one seed alone, tau = 0 (the sentence-level null exactly true): the test
  that each old verdict counted;
- with --sacrebleu N: sacreBLEU's paired bootstrap and approximate randomisation (1000 each, as
  `per_seed_rule.text_pair_test` runs them) on N pairs of simulated texts from one generator
  (references of random words; each system replaces each word with probability 0.2). Slow (a
  few seconds per pair), so off by default and small when on.

The defaults take about 3 minutes on one core.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnlab.compare.stats.across_seeds import aer_scorer, compare_across_seeds, mean_scorer
from per_seed_rule import aer_pair_test, seed_verdict  # benchmarks/, beside this file

ALPHA = 0.05
N = 200
SD_V, SD_W, SD_E = 1.0, 0.3, 0.3
LOGIT, POSSIBLE = 1.0, 0.25
SCALE = 1000  # the mean metric as AER counts (Kx, Kx, K, K)

Pair = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Metric:
    name: str
    simulate: Callable[[np.random.Generator, int, float, float], Pair]  # rng, seeds, tau, shift
    scorer: Callable[[np.ndarray], np.ndarray]
    as_counts: Callable[[np.ndarray], np.ndarray]   # one run's stats -> (n, 4) AER counts
    test_noise: float    # sd of one run's score over test sets
    slope: float         # d score / d shift


def _normal_terms(rng: np.random.Generator, seeds: int, tau: float, w: np.ndarray,
                  v: np.ndarray, shift: float) -> np.ndarray:
    return shift + rng.normal(0.0, tau, (seeds, 1)) + v + w + rng.normal(0.0, SD_E, (seeds, N))


def simulate_mean(rng: np.random.Generator, seeds: int, tau: float, shift: float) -> Pair:
    v = rng.normal(0.0, SD_V, N)
    runs = []
    for effect in (shift, 0.0):
        x = _normal_terms(rng, seeds, tau, rng.normal(0.0, SD_W, N), v, effect)
        runs.append(np.stack([x, np.ones_like(x)], axis=-1))
    return runs[0], runs[1]


def _mean_counts(stats: np.ndarray) -> np.ndarray:
    q = np.rint(SCALE * stats[:, 0]).astype(np.int64)
    k = np.full(len(q), SCALE, dtype=np.int64)
    return np.stack([q, q, k, k], axis=1)


def _sure_links(rng: np.random.Generator) -> np.ndarray:
    return 3 + rng.poisson(5, N)


def _links(rng: np.random.Generator, sure: np.ndarray, logits: np.ndarray) -> np.ndarray:
    sure = np.broadcast_to(sure, logits.shape)
    hits = rng.binomial(sure, 1 / (1 + np.exp(-logits)))
    possible = hits + rng.binomial(sure - hits, POSSIBLE)
    return np.stack([hits, possible, sure, sure], axis=-1)


def simulate_aer(rng: np.random.Generator, seeds: int, tau: float, shift: float) -> Pair:
    v, sure = rng.normal(0.0, SD_V, N), _sure_links(rng)
    runs = [_links(rng, sure, LOGIT + _normal_terms(rng, seeds, tau, rng.normal(0.0, SD_W, N),
                                                    v, effect))
            for effect in (shift, 0.0)]
    return runs[0], runs[1]


def aer_metric(rng: np.random.Generator) -> Metric:
    """AER's test noise (one run, u = 0, over 4000 test sets) and its slope in the logit shift
    (d E[AER] / d shift = -(2 - POSSIBLE) sum S_i p_i (1 - p_i) / (2 sum S_i), averaged)."""
    scores, slopes = [], []
    for _ in range(4000):
        sure, v = _sure_links(rng), rng.normal(0.0, SD_V, N)
        logits = LOGIT + v + rng.normal(0.0, SD_W, N) + rng.normal(0.0, SD_E, N)
        scores.append(float(aer_scorer(_links(rng, sure, logits).sum(axis=0))))
        p = 1 / (1 + np.exp(-logits))
        slopes.append(-(2 - POSSIBLE) * np.sum(sure * p * (1 - p)) / (2 * sure.sum()))
    return Metric("AER counts", simulate_aer, aer_scorer, lambda run: run.astype(np.int64),
                  float(np.std(scores)), float(np.mean(slopes)))


MEAN = Metric("mean metric", simulate_mean, mean_scorer, _mean_counts,
              math.sqrt((SD_W ** 2 + SD_E ** 2) / N), 1.0)


def old_rule(metric: Metric, a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> float:
    """+1 / -1 when the majority of per-seed paired bootstraps says A is higher / lower, else 0."""
    results = [aer_pair_test(metric.as_counts(run_a), metric.as_counts(run_b), samples=samples,
                             seed=seed + index)
               for index, (run_a, run_b) in enumerate(zip(a, b, strict=True))]
    # aer_pair_test's "difference" is a's AER - b's; lower_is_better=True: ">" means A is lower
    direction = seed_verdict(results, ALPHA, lower_is_better=True)[0]
    sign = {">": -1.0, "<": 1.0, "=": 0.0}[direction]
    return sign if metric.as_counts is not _mean_counts else -sign  # 1 - AER is the mean


def rate_text(hits: int, sims: int) -> str:
    rate = hits / sims
    return f"{rate:.3f} | {math.sqrt(rate * (1 - rate) / sims):.3f} | {sims}"


def table(metric: Metric, args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    rows = []
    for seeds in (3, 5):
        for label, tau in (("0.2x", 0.2), ("5x", 5.0)):
            tau_score = tau * metric.test_noise
            tau_shift = tau_score / abs(metric.slope)
            found = {"null": [0, 0], "effect": [0, 0]}   # [across seeds, old rule]
            differences: dict[str, list[float]] = {"null": [], "effect": []}
            effect_shift = 0.0
            for hypothesis in ("null", "effect"):
                for index in range(args.sims):
                    a, b = metric.simulate(rng, seeds, tau_shift, effect_shift)
                    sample_seed = int(rng.integers(1, 2 ** 31))
                    result = compare_across_seeds(a, b, metric.scorer, samples=args.samples,
                                                  seed=sample_seed)
                    want = 0.0 if hypothesis == "null" else math.copysign(1.0, effect_shift
                                                                          * metric.slope)
                    differences[hypothesis].append(result.difference)
                    found[hypothesis][0] += result.significant(ALPHA) and (
                        want == 0 or result.difference * want > 0)
                    if index < args.old_sims:
                        direction = old_rule(metric, a, b, args.samples, sample_seed)
                        found[hypothesis][1] += direction != 0 and (want in (0, direction))
                if hypothesis == "null":
                    se = float(np.std(differences["null"]))
                    effect_shift = 3 * se / abs(metric.slope)
            realised = abs(float(np.mean(differences["effect"])))
            effect = f"{realised:.4f} ({realised / se:.1f} SE)"
            for test, column, sims in (("across seeds", 0, args.sims),
                                       ("old rule: majority of per-seed bootstraps", 1,
                                        args.old_sims)):
                rows.append(f"| {metric.name} | {test} | {seeds} | {label} | "
                            f"{rate_text(found['null'][column], sims)} | {effect} | "
                            f"{rate_text(found['effect'][column], sims)} |")
    # the sentence-level test alone: one run each, no seed effect
    rejected = 0
    for _ in range(args.old_sims):
        a, b = metric.simulate(rng, 1, 0.0, 0.0)
        rejected += aer_pair_test(metric.as_counts(a[0]), metric.as_counts(b[0]),
                                  samples=args.samples,
                                  seed=int(rng.integers(1, 2 ** 31))).significant(ALPHA)
    rows.append(f"| {metric.name} | paired bootstrap within one seed (aer_pair_test) | 1 | 0 | "
                f"{rate_text(rejected, args.old_sims)} | | | | |")
    return rows


WORDS = ("a man woman dog child in on the with red blue shirt is riding running bike street "
         "park ball two three people near water green small big").split()


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
    return [f"| BLEU (texts) | sacreBLEU {name} (one run each) | 1 | 0 | "
            f"{rate_text(rejected[method], pairs)} | | | | |"
            for method, name in (("bs", "paired bootstrap"), ("ar", "approximate randomisation"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400,
                        help="simulations per cell for the across-seed test (default 400)")
    parser.add_argument("--old-sims", type=int, default=100,
                        help="simulations per cell for the old rule and the one-seed bootstrap "
                             "(at most --sims; default 100)")
    parser.add_argument("--samples", type=int, default=1000,
                        help="bootstrap resamples in every test (default 1000, attnlab's)")
    parser.add_argument("--sacrebleu", type=int, default=0, metavar="N",
                        help="also run sacreBLEU's paired tests on N simulated text pairs "
                             "(slow: a few seconds each; default 0)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args()
    args.old_sims = min(args.old_sims, args.sims)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    metrics = [MEAN, aer_metric(rng)]
    print(f"Rejection rates at alpha = {ALPHA}: n = {N} test sentences, {args.samples} bootstrap "
          f"resamples, seed {args.seed}. tau: the seeds' sd as a multiple of the test noise "
          f"(mean metric {metrics[0].test_noise:.4f}, AER {metrics[1].test_noise:.4f}). Under "
          f"the effect, only differences in the right direction count.\n")
    print("| metric | test | seeds | tau | null: rate | MC se | sims | effect | "
          "effect: rate | MC se | sims |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for metric in metrics:
        print("\n".join(table(metric, args, rng)), flush=True)
    if args.sacrebleu:
        print("\n".join(sacrebleu_rows(args.sacrebleu, rng)), flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
