"""The old per-seed rule, kept out of the product for benchmarks/calibration.py: paired
significance tests of two systems on one test set (one seed of each), and the old
verdict over seeds. Neither decides anything in attnlab any more: a test within one seed
measures only which sentences were drawn, not training variance, so `attnlab compare` decides
across seeds (attnlab.compare.stats.across_seeds). They stay for description and for
benchmarks/calibration.py, which shows what the old rule did under a true null.

- BLEU and chrF (0-100, sacreBLEU's scale): sacreBLEU's own paired tests (Post 2018,
  `sacrebleu.significance.PairedTest`), as ``sacrebleu --paired-bs`` / ``--paired-ar`` run them:
  paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
  Translation Evaluation") or approximate randomisation (Riezler & Maxwell 2005, "On Some
  Pitfalls in Automatic Evaluation and Significance Testing for MT"), with the p-value of
  multeval (Clark et al. 2011, "Better Hypothesis Testing for Statistical Machine Translation:
  Controlling for Optimizer Instability").
- AER (a fraction, 0 is perfect; Och & Ney 2003): the same paired bootstrap over sentences,
  written here on `attnlab.eval.aer_counts` rows since sacreBLEU has no AER.
- The old rule over seeds (seed_verdict): a difference counted when it was significant in a
  strict majority of the seeds. Under a true null with seeds spread wider than the test noise it
  declares a direction 52-77% of the time (benchmarks/calibration.py): it counts seed luck.

One departure from sacreBLEU: a difference of exactly 0 gets p = 1. sacreBLEU counts resamples
with a difference strictly above the observed one, so two identical systems get the smallest
p-value it can give, 1 / (samples + 1), and would read as "significant".
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from attnlab.translation.alignment import aer_from_counts

RULE = ("For each seed, A and B are compared on the same test sentences with a paired test; "
        "A > B means A is significantly better (p < 0.05) in a strict majority of the seeds, "
        "A < B that it is significantly worse in a strict majority, and = that neither holds, "
        "where better means higher, except for AER and perplexity, where it means lower.")

METHODS = {"bs": "paired bootstrap resampling", "ar": "approximate randomisation"}


@dataclass(frozen=True)
class PairResult:
    """One paired test of system A against system B on one metric: the scores a and b (the
    metric's unit: 0-100 for BLEU and chrF, a fraction for AER), difference = a - b, the two-sided
    p-value, and the method ("bs" paired bootstrap, "ar" approximate randomisation)."""

    metric: str
    a: float
    b: float
    difference: float
    p_value: float
    method: str

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the difference is significant at level alpha (p < alpha)."""
        return self.p_value < alpha


@contextmanager
def _sacrebleu_run(seed: int) -> Iterator[None]:
    """sacreBLEU reads its seed from SACREBLEU_SEED (as its command line does) and logs each step
    at INFO: set the one and silence the other for the duration, then restore both."""
    logger = logging.getLogger("sacrebleu")
    level, before = logger.level, os.environ.get("SACREBLEU_SEED")
    logger.setLevel(logging.WARNING)
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        yield
    finally:
        logger.setLevel(level)
        if before is None:
            os.environ.pop("SACREBLEU_SEED", None)
        else:
            os.environ["SACREBLEU_SEED"] = before


def text_pair_test(hypotheses_a: Sequence[str], hypotheses_b: Sequence[str],
                   references: Sequence[Sequence[str]], *, method: str = "bs",
                   samples: int = 1000, seed: int = 12345) -> dict[str, PairResult]:
    """BLEU and chrF of A against B with sacreBLEU's paired test: {"bleu": ..., "chrf": ...}.

    hypotheses_a, hypotheses_b: one string per test sentence (n each, the same sentences).
    references: sacreBLEU's layout, a list of reference streams: references[k][i] is the k-th
    reference of sentence i (several streams for captioning). method: "bs" (Koehn 2004; samples
    resamples) or "ar" (Riezler & Maxwell 2005; samples trials; the sacreBLEU command line's
    default is 10000). B is sacreBLEU's baseline; the scores and p-values are those of its Result
    objects (the test is symmetric in A and B), except that a zero difference gets p = 1. Like
    `aer_pair_test`, the bootstrap's p-value rejects too often under a true null; neither
    decides a verdict (`attnlab.compare.stats.across_seeds` does).
    seed (>= 1; sacreBLEU takes 0 as "no seed") makes the result deterministic. Not thread-safe:
    that seed reaches sacreBLEU through the SACREBLEU_SEED environment variable, as on its
    command line.
    """
    if method not in METHODS:
        raise ValueError(f"unknown test method {method!r}; options: {sorted(METHODS)}")
    if samples < 1 or seed < 1:
        raise ValueError(f"samples and seed must be at least 1, got {samples} and {seed}.")
    n = len(hypotheses_a)
    lengths = [len(hypotheses_b), *(len(stream) for stream in references)]
    if n == 0 or not references or any(length != n for length in lengths):
        # sacreBLEU zips hypotheses with references, so it would silently drop the extra lines.
        raise ValueError(f"need the same number (> 0) of hypotheses for A ({n}), for B and in "
                         f"each reference stream ({lengths}).")
    metrics = {"BLEU": BLEU(), "chrF": CHRF()}
    with _sacrebleu_run(seed):
        test = PairedTest([("B", list(hypotheses_b)), ("A", list(hypotheses_a))], metrics,
                          references=references, test_type=method, n_samples=samples, n_jobs=1)
        _, scores = test()
    names = [name for name in scores if name != "System"]  # "BLEU", "chrF2": the metrics' order
    results = {}
    for key, name in zip(("bleu", "chrf"), names, strict=True):
        baseline, system = scores[name]
        assert not isinstance(baseline, str) and not isinstance(system, str)
        difference = system.score - baseline.score
        p_value = 1.0 if difference == 0 else system.p_value
        assert p_value is not None
        results[key] = PairResult(metric=key, a=system.score, b=baseline.score,
                                  difference=difference, p_value=p_value, method=method)
    return results


def _aer_of_sums(sums: np.ndarray) -> np.ndarray:
    """AER of each row of summed counts (samples, 4) -> (samples,)."""
    denominator = sums[:, 2] + sums[:, 3]
    if not denominator.all():
        raise ValueError("AER is undefined in a resample: too few links to resample.")
    return 1.0 - (sums[:, 0] + sums[:, 1]) / denominator


def aer_pair_test(counts_a: np.ndarray, counts_b: np.ndarray, *, samples: int = 1000,
                  seed: int = 12345) -> PairResult:
    """Paired bootstrap test (Koehn 2004) of A's AER against B's (metric "aer", fractions).

    counts_a, counts_b: `attnlab.translation.alignment.aer_counts` arrays (n, 4) of the same n
    sentence pairs.
    Each of the samples resamples draws n sentence indices with replacement, the same for both
    systems (drawn like sacreBLEU's: numpy's default_rng(seed).choice(n, (samples, n))), and
    scores both on them. The p-value is sacreBLEU's paired bootstrap one
    (`sacrebleu.significance._paired_bs_test` and `_compute_p_value`, after multeval): with
    d_s = |AER_a(s) - AER_b(s)| on resample s and d = |AER_a - AER_b| on the test set,
    p = (#{s : d_s - mean(d_s) > d} + 1) / (samples + 1); a zero difference gets 1. Centring the
    absolute differences makes it reject too often: under a true null about 13% at alpha 0.05
    (`benchmarks/calibration.py`, its within-one-seed row), so it describes one pair of runs
    and decides nothing: the suites' verdicts use `attnlab.compare.stats.across_seeds`.
    """
    a, b = np.asarray(counts_a, dtype=np.int64), np.asarray(counts_b, dtype=np.int64)
    if a.ndim != 2 or a.shape[1] != 4 or a.shape != b.shape or len(a) == 0:
        raise ValueError(f"need two (n, 4) AER count arrays of the same n > 0, got {a.shape} "
                         f"and {b.shape}.")
    if not np.array_equal(a[:, 3], b[:, 3]):
        raise ValueError("the two count arrays have different sure gold links (column 3): "
                         "they are not of the same sentences.")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}.")
    score_a, score_b = aer_from_counts(a), aer_from_counts(b)
    difference = score_a - score_b
    rng = np.random.default_rng(seed)
    indices = rng.choice(len(a), size=(samples, len(a)), replace=True)  # (samples, n)
    sample_diffs = np.empty(samples)
    for start in range(0, samples, 64):  # 64 resamples at a time: (64, n, 4) in memory
        block = indices[start:start + 64]
        sample_diffs[start:start + 64] = np.abs(_aer_of_sums(a[block].sum(axis=1))
                                                - _aer_of_sums(b[block].sum(axis=1)))
    if difference == 0:
        p_value = 1.0
    else:
        above = int(np.sum(sample_diffs - sample_diffs.mean() > abs(difference)))
        p_value = (above + 1) / (samples + 1)
    return PairResult(metric="aer", a=score_a, b=score_b, difference=difference,
                      p_value=p_value, method="bs")


def seed_verdict(results: Sequence[PairResult], alpha: float = 0.05,
                 lower_is_better: bool = False) -> tuple[str, int, int]:
    """(direction, k, n) over the n seeds' results of one pair A vs B on one metric.

    ">" if A is significantly better (p < alpha) in a strict majority of seeds, k of them; "<" if
    significantly worse in a strict majority; otherwise "=", with k the seeds without a
    significant difference. lower_is_better (AER, perplexity): a lower score is better.
    """
    if not results:
        raise ValueError("seed_verdict needs the results of at least one seed.")
    if len({result.metric for result in results}) > 1:
        raise ValueError(f"results of different metrics: {sorted({r.metric for r in results})}")
    better, worse = seed_split(results, alpha, lower_is_better)
    n = len(results)
    if 2 * better > n:
        return (">", better, n)
    if 2 * worse > n:
        return ("<", worse, n)
    return ("=", n - better - worse, n)


def seed_split(results: Sequence[PairResult], alpha: float = 0.05,
               lower_is_better: bool = False) -> tuple[int, int]:
    """(seeds where A is significantly better, seeds where it is significantly worse)."""
    sign = -1.0 if lower_is_better else 1.0
    significant = [r for r in results if r.significant(alpha) and r.difference != 0]
    better = sum(1 for r in significant if sign * r.difference > 0)
    return better, len(significant) - better


def finding_sentence(label_a: str, label_b: str, metric_name: str,
                     verdict: tuple[str, int, int], alpha: float = 0.05,
                     split: tuple[int, int] | None = None) -> str:
    """The report's sentence for a seed_verdict, e.g. "Bahdanau > no attention on BLEU (p < 0.05
    in 3 of 3 seeds)", or "no significant difference between X and Y on chrF (1 of 3 seeds
    significant at p < 0.05)" (">" reads "better than", also where lower is better).

    split: (seeds where A is significantly better, seeds where it is significantly worse), as
    seed_split gives; when both happen, an "=" says the seeds disagree rather than counting
    significant seeds, which would read as if A and B were apart."""
    direction, k, n = verdict
    seeds = "seed" if n == 1 else "seeds"
    if direction in (">", "<"):
        return (f"{label_a} {direction} {label_b} on {metric_name} "
                f"(p < {alpha:g} in {k} of {n} {seeds})")
    if direction == "=" and split is not None and split[0] and split[1]:
        return (f"no consistent difference between {label_a} and {label_b} on {metric_name} "
                f"(the seeds disagree: {label_a} significantly better in {split[0]}, worse in "
                f"{split[1]}, of {n} {seeds}, p < {alpha:g})")
    if direction == "=":
        return (f"no significant difference between {label_a} and {label_b} on {metric_name} "
                f"({n - k} of {n} {seeds} significant at p < {alpha:g})")
    raise ValueError(f"unknown verdict direction {direction!r}; options: ['<', '=', '>']")


__all__ = ["METHODS", "RULE", "PairResult", "aer_pair_test", "finding_sentence",
           "seed_split", "seed_verdict", "text_pair_test"]
