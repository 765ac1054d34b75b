"""What an explanation costs: per sentence, translating it (greedy and beam 5) beside each
attribution of its greedy translation, now and as computed before (captum over T copies of the
model per point, tests/explain/reference_attribution.py) in the same run, and the faithfulness
tests; medians over the sentences, one table.

    python benchmarks/explain.py --run runs/compare-dates/bahdanau/seed-1 \
        --src runs/data/dates/test.src --sentences 20
    python benchmarks/explain.py --fresh multi30k-bahdanau --rwth 10 --no-tests

--fresh builds a shipped config's model (src/attnlab/configs/NAME.yaml) with random weights and
the Multi30k joint 8k BPE (benchmarks/common.py): the speed of a pass does not depend on
training, but how many points integrated gradients need to converge does, so the table says
which model it timed. A fresh model would translate to its length limit, so its greedy and beam
translations stop at the reference's length (--rwth gives the reference); the attributions
explain that output. --rwth N reads the first N German sentences of the RWTH gold
($ATTNLAB_DATA/rwth-deen-gold).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import attnlab
from attnlab.config import load_config
from attnlab.data.vocab import EOS_ID
from attnlab.explain.attribution import ForcedPair, attribution
from attnlab.explain.faithfulness import adversarial_jsd, erasure_flips, permutation_tvd
from attnlab.explain.forced import ForcedTranslation
from attnlab.explain.intervene import RowEdit
from attnlab.explain.methods import MAX_STEPS, TOLERANCE
from attnlab.models import build_model
from attnlab.translation.config import RunConfig
from attnlab.translation.run import TranslationRun
from common import DATA, REPO, gemm_rate, multi30k_config, multi30k_vocabularies, whole_number

sys.path.insert(0, str(REPO / "tests"))
from explain.reference_attribution import reference_attribute  # noqa: E402  (tests/ above)
from explain.reference_faithfulness import full_pass_read  # noqa: E402


class FullPass(ForcedTranslation):
    """The forced pair read as before: every copy encodes the source and runs the whole target,
    the output layer at every position."""

    def read(self, rows: torch.Tensor, edit: RowEdit | None = None) -> torch.Tensor:
        return full_pass_read(self, rows, edit)

OLD_STEPS = 32   # integrated gradients' points before they converged by default
FLOOR = "floor: a forward pass of min(T, S) copies"


def timed(work: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    found = work()
    return time.perf_counter() - start, found


def fresh_run(name: str) -> TranslationRun:
    """The shipped config `name` with random weights (seed 0) and the Multi30k joint BPE."""
    config = load_config(REPO / "src" / "attnlab" / "configs" / f"{name}.yaml", RunConfig)
    vocabs = multi30k_vocabularies(multi30k_config())
    torch.manual_seed(0)
    model = build_model(config.model, len(vocabs.src), len(vocabs.tgt),
                        max_src_len=config.data.max_len + 1).eval()
    return TranslationRun(Path(f"fresh {name}"), "none", {}, config, model, vocabs)


def rwth(count: int) -> list[tuple[str, str]]:
    lines = (DATA / "rwth-deen-gold" / "test.de-en").read_text(encoding="utf-8").splitlines()
    pairs = [line.split(" ||| ") for line in lines[:count]]
    return [(german, english) for german, english in pairs]


class Table:
    """Seconds per sentence by row, and what integrated gradients reported."""

    def __init__(self) -> None:
        self.rows: dict[str, list[float]] = {}
        self.points: list[int] = []
        self.gaps: list[float] = []
        self.capped = 0

    def add(self, name: str, work: Callable[[], object]) -> object:
        seconds, found = timed(work)
        self.rows.setdefault(name, []).append(seconds)
        return found

    def median(self, name: str) -> float:
        return statistics.median(self.rows[name])


def measure(run: TranslationRun, line: str, reference: str | None, table: Table, *,
            old: bool, tests: bool) -> None:
    """Time translating `line` and each attribution (and, with `tests`, each faithfulness
    test) of its greedy translation."""
    limit = {} if reference is None else {
        "max_len_ratio": 0.0, "max_len_extra": len(run.vocabs.tgt.encode(reference))}
    table.add("translate, greedy", lambda: run.translate([line], beam=1, **limit))
    table.add("translate, beam 5", lambda: run.translate([line], beam=5, **limit))
    result = run.translate([line], beam=1, **limit)[0]
    target = [i for i in result.tokens if i != EOS_ID]
    pair = ForcedPair.of(run.vocabs.src.encode(line), target, torch.device("cpu"))
    model = run.model
    if old:
        table.add("gradient x input, before (captum)",
                  lambda: reference_attribute(model, pair, "gradient"))
    table.add("gradient x input", lambda: attribution(model, pair, "gradient"))
    table.add(FLOOR, lambda: copies_forward(model, pair))
    if old:
        table.add(f"integrated gradients, {OLD_STEPS} points, before (captum)",
                  lambda: reference_attribute(model, pair, "integrated_gradients",
                                              steps=OLD_STEPS))
        table.add(f"integrated gradients, {OLD_STEPS} points",
                  lambda: attribution(model, pair, "integrated_gradients", steps=OLD_STEPS,
                                      tolerance=None))
    found = table.add(f"integrated gradients, to {TOLERANCE:g} nats",
                      lambda: attribution(model, pair, "integrated_gradients"))
    table.points.append(found.steps)  # type: ignore[attr-defined]
    table.gaps.append(found.gap)  # type: ignore[attr-defined]
    table.capped += found.capped  # type: ignore[attr-defined]
    table.add("erasure", lambda: attribution(model, pair, "erasure"))
    if not tests:
        return
    gradient = attribution(model, pair, "gradient").values
    if old:
        time_tests(table, FullPass(model, pair), gradient, ", before (full passes)")
    time_tests(table, ForcedTranslation(model, pair), gradient, "")


def copies_forward(model: Any, pair: ForcedPair) -> torch.Tensor:
    """The least an exact gradient x input can cost: its T x S values are a Jacobian, and
    pushing min(T, S) directions through the model's linearisation (forward or reverse)
    multiplies each of its matrices by min(T, S) vectors, as a forward pass of min(T, S)
    copies does. The output layer is left out, as the attributions' backward leaves it."""
    n = min(pair.steps, pair.positions)
    decoder = model.decoder
    with torch.no_grad():
        encoded = model.encode(pair.src.expand(n, -1), pair.src_mask.expand(n, -1))
        features, _, _ = decoder.run(decoder.embedding(pair.tgt_in.expand(n, -1)),
                                     decoder.start(encoded))
    return features


def time_tests(table: Table, forced: ForcedTranslation, gradient: Any, suffix: str) -> None:
    """Time each faithfulness test of one forced pair, its rows named with `suffix`."""
    generator = torch.Generator().manual_seed(0)
    table.add(f"faithfulness: erasure flips{suffix}",
              lambda: erasure_flips(forced, gradient, generator))
    table.add(f"faithfulness: 20 permutations{suffix}",
              lambda: permutation_tvd(forced, generator))
    table.add(f"faithfulness: adversarial, 100 steps{suffix}", lambda: adversarial_jsd(forced))


def report(table: Table, heading: str) -> None:
    base = table.median("translate, greedy")
    print(heading + "\n")
    print("| per sentence | median ms | x greedy translation |")
    print("|---|---|---|")
    for name in table.rows:
        median = table.median(name)
        print(f"| {name} | {median * 1000:.1f} | {median / base:.1f} |")
    print(f"\nintegrated gradients to {TOLERANCE:g} nats (cap {MAX_STEPS} points): points median "
          f"{statistics.median(table.points):g} (min {min(table.points)}, max "
          f"{max(table.points)}); worst-row completeness gap median "
          f"{statistics.median(table.gaps):.2g} nats (max {max(table.gaps):.2g}); capped "
          f"{table.capped} of {len(table.points)}")
    pairs = [("gradient x input, before (captum)", "gradient x input"),
             (f"integrated gradients, {OLD_STEPS} points, before (captum)",
              f"integrated gradients, {OLD_STEPS} points"),
             (f"integrated gradients, {OLD_STEPS} points, before (captum)",
              f"integrated gradients, to {TOLERANCE:g} nats")]
    pairs += [(f"faithfulness: {test}, before (full passes)", f"faithfulness: {test}")
              for test in ("erasure flips", "20 permutations", "adversarial, 100 steps")]
    for before, now in pairs:
        if before in table.rows:
            print(f"{now}: {table.median(before) / table.median(now):.1f}x as fast as {before}")
    print(f"gradient x input: {table.median('gradient x input') / table.median(FLOOR):.1f}x "
          f"the {FLOOR}")


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument("--run", help="a trained translation run")
    model.add_argument("--fresh", metavar="CONFIG",
                       help="a shipped config's model with random weights, e.g. "
                       "multi30k-bahdanau")
    sentences = parser.add_mutually_exclusive_group(required=True)
    sentences.add_argument("--src", help="a file of source sentences")
    sentences.add_argument("--rwth", type=whole_number(1, 508), metavar="N",
                           help="the first N German sentences of the RWTH gold")
    parser.add_argument("--sentences", type=whole_number(1), default=20)
    parser.add_argument("--threads", type=whole_number(1), default=1)
    parser.add_argument("--no-tests", action="store_true",
                        help="time the attributions only (the adversarial search takes minutes "
                        "per long sentence)")
    parser.add_argument("--no-old", action="store_true",
                        help="leave out the captum path (integrated gradients at 32 points "
                        "take about a minute per RWTH sentence)")
    return parser


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(args.threads)
    run = fresh_run(args.fresh) if args.fresh else attnlab.load(args.run, device="cpu")
    if args.rwth:
        pairs: list[tuple[str, str | None]] = list(rwth(args.rwth))
        source = f"the first {args.rwth} RWTH German sentences"
    else:
        with open(args.src, encoding="utf-8") as file:
            lines = [line.strip() for line in file if line.strip()][: args.sentences]
        pairs = [(line, None) for line in lines]
        source = f"{len(lines)} sentences of {args.src}"
    table = Table()
    for line, reference in pairs:
        measure(run, line, reference if args.fresh else None, table, old=not args.no_old,
                tests=not args.no_tests)
    model = (f"a fresh {args.fresh} (random weights, seed 0; translations cut at the "
             f"reference's length)" if args.fresh else f"run {args.run}")
    print(f"{source}, {model}, {args.threads} thread(s), torch.mm 1024^3 at "
          f"{gemm_rate():.0f} GFLOP/s")
    report(table, "")


if __name__ == "__main__":
    main()
