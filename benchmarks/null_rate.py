"""The across-seed test's false-positive rate on real runs: N seeds of ONE member (one config,
seeds 1..N) split into two pretend members, every way (or a random sample of the ways) of
drawing k seeds for A and k others for B; both halves are the same system, so every "significant"
difference is a false positive. The test is the product's own (compare.stats.verdicts:
statistics, compare_across_seeds), on each metric the member's records hold.

    attnlab compare dates --dir runs/null-dates --only bahdanau --seeds 10 --jobs 2
    python benchmarks/null_rate.py runs/null-dates/bahdanau --sizes 3 5 --splits 300

Splits share seeds, so they are not independent: the Monte Carlo error printed is the binomial
one of independent draws, a lower bound; the rate of the 5-vs-5 splits (126 of them, all) is the
more informative one at these sizes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
from pathlib import Path

from attnlab.compare.report.page import with_exact_match, with_length_drop
from attnlab.compare.stats.across_seeds import MIN_SEEDS, compare_across_seeds
from attnlab.compare.stats.seeds import aggregate
from attnlab.compare.stats.verdicts import statistics
from common import whole_number

ALPHA = 0.05


def splits(seeds: int, size: int, most: int, rng: random.Random) -> list[tuple[tuple, tuple]]:
    """Disjoint (A, B) seed-index sets of `size` each, unordered pairs, at most `most` of them
    (a random sample when there are more)."""
    every = [(a, b) for a in itertools.combinations(range(seeds), size)
             for b in itertools.combinations([k for k in range(seeds) if k not in a], size)
             if a < b]
    return every if len(every) <= most else rng.sample(every, most)


def null_rate(runs: list[dict], metric: str, size: int, most: int, samples: int,
              rng: random.Random) -> tuple[int, int] | None:
    """(rejections at ALPHA, tests) of metric over the splits; None when it cannot be tested."""
    rejected = tested = 0
    for a, b in splits(len(runs), size, most, rng):
        found = statistics(aggregate([runs[k] for k in a]), aggregate([runs[k] for k in b]),
                           metric)
        if found is None:
            return None
        comparison = compare_across_seeds(*found, samples=samples, seed=rng.randrange(2**31))
        if comparison.p_value is None:
            return None
        rejected += comparison.p_value < ALPHA
        tested += 1
    return rejected, tested


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("member", type=Path, help="a suite member's folder, holding seed-K/")
    parser.add_argument("--sizes", type=whole_number(MIN_SEEDS), nargs="+", default=[3, 5],
                        help="seeds per pretend member (default 3 5)")
    parser.add_argument("--splits", type=whole_number(1), default=300,
                        help="the most splits tested per size (default 300)")
    parser.add_argument("--samples", type=whole_number(2), default=300,
                        help="bootstrap resamples of the sentences per test (default 300)")
    parser.add_argument("--metrics", nargs="+", default=["bleu", "exact_match", "aer"])
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    folders = sorted(args.member.glob("seed-*/compare.json"),
                     key=lambda path: int(path.parent.name.removeprefix("seed-")))
    # each record as the report reads it (exact match where it is the run's own metric)
    runs = [with_length_drop(with_exact_match(json.loads(path.read_text(encoding="utf-8")),
                                              path.parent)) for path in folders]
    if any(2 * size > len(runs) for size in args.sizes):
        print(f"null_rate: {args.member} has {len(runs)} finished seeds; --sizes "
              f"{max(args.sizes)} needs {2 * max(args.sizes)}", file=sys.stderr)
        return 2
    print(f"{args.member}: {len(runs)} seeds of one config; alpha {ALPHA}; the product's "
          f"across-seed test, {args.samples} bootstrap resamples")
    print("| metric | seeds per side | splits | called significant | share "
          "| MC se at 0.05 (binomial) |")
    print("|---|---|---|---|---|---|")
    rng = random.Random(1)
    for metric, size in itertools.product(args.metrics, args.sizes):
        found = null_rate(runs, metric, size, args.splits, args.samples, rng)
        if found is None:
            print(f"| {metric} | {size} | - | not testable on these records | | |")
            continue
        rejected, tested = found
        share = rejected / tested
        se = math.sqrt(ALPHA * (1 - ALPHA) / tested)
        print(f"| {metric} | {size} v {size} | {tested} | {rejected} | {share:.3f} | "
              f"{se:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
