"""What an explanation costs: per sentence, translating it (greedy and beam 5) beside each
attribution of its translation (attnlab.explain: gradient x input, integrated gradients at 32
points, erasure) and the faithfulness tests, medians over the sentences, one table.

    python benchmarks/explain.py --run runs/compare-dates/bahdanau/seed-1 \
        --src runs/data/dates/test.src --sentences 20 [--threads 1] [--no-tests]

Every attribution is one batched pass over the target steps (erasure: one per source position,
integrated gradients: one per point, each chunked to at most 512 sequences); the ratio column
is each against the greedy translation of the same sentence.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

import torch

import attnlab
from attnlab.data.vocab import EOS_ID
from attnlab.explain.attribution import ForcedPair, attribute
from attnlab.explain.faithfulness import adversarial_jsd, erasure_flips, permutation_tvd


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def measure_sentence(run, line: str, add: Callable[[str, float], None],
                     tests: bool = True) -> None:
    """Time translating `line` and each attribution (and, with `tests`, each faithfulness
    test) of its greedy translation."""
    add("translate, greedy", timed(lambda: run.translate([line], beam=1)))
    add("translate, beam 5", timed(lambda: run.translate([line], beam=5)))
    result = run.translate([line], beam=1)[0]
    target = [i for i in result.tokens if i != EOS_ID]
    pair = ForcedPair.of(run.vocabs.src.encode(line), target, torch.device("cpu"))
    for method in ("gradient", "integrated_gradients", "erasure"):
        add(method.replace("_", " "), timed(partial(attribute, run.model, pair, method)))
    if not tests:
        return
    gradient = attribute(run.model, pair, "gradient")
    generator = torch.Generator().manual_seed(0)
    add("faithfulness: erasure flips",
        timed(lambda: erasure_flips(run.model, pair, gradient, generator)))
    add("faithfulness: 20 permutations", timed(lambda: permutation_tvd(run.model, pair, generator)))
    add("faithfulness: adversarial, 100 steps", timed(lambda: adversarial_jsd(run.model, pair)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True)
    parser.add_argument("--src", required=True, help="a file of source sentences")
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-tests", action="store_true",
                        help="time the attributions only (the adversarial search takes minutes "
                        "per long sentence)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = attnlab.load(args.run, device="cpu")
    with open(args.src, encoding="utf-8") as file:
        lines = [line.strip() for line in file if line.strip()][: args.sentences]
    rows: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        rows.setdefault(name, []).append(seconds * 1000)

    for line in lines:
        measure_sentence(run, line, add, tests=not args.no_tests)
    base = statistics.median(rows["translate, greedy"])
    print(f"{len(lines)} sentences of {args.src}, run {args.run}, {args.threads} thread(s)\n")
    print("| per sentence | median ms | x greedy translation |")
    print("|---|---|---|")
    for name, times in rows.items():
        median = statistics.median(times)
        print(f"| {name} | {median:.1f} | {median / base:.1f} |")


if __name__ == "__main__":
    main()
