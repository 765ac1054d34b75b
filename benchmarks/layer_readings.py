"""Every reading of one run's attention on the RWTH German-English gold, each layer and head of a
Transformer's included: the AER table `attnlab compare SUITE --explain` computes per seed, for a
single run without a suite (one run decides nothing; the eras suites decide across seeds).

    python benchmarks/layer_readings.py --run runs/transformer --rwth data/rwth-deen-gold

Prints, per reading (argmax, threshold, shifted one step, norm-based), the AER of every layer's
head average and of the best head, beside the last layer's average and the diagonal aligner.
Attention's views only (no attributions): about a minute for the 508 pairs on one thread.
"""

from __future__ import annotations

import argparse

import torch

from attnlab.translation.alignment import rwth_gold_for_run
from attnlab.translation.alignment.extractions import extraction_scores
from attnlab.translation.alignment.golds import within_reach
from attnlab.translation.run import TranslationRun
from common import whole_number

READINGS = ("attention", "attention >= 0.3", "attention, row t+1", "attention x value norm")


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", required=True, help="a translation run directory (German to "
                        "English, for the RWTH gold)")
    parser.add_argument("--rwth", required=True, help="the RWTH gold's folder (attnlab data "
                        "rwth-deen-gold)")
    parser.add_argument("--pairs", type=whole_number(), default=None,
                        help="the first N pairs of the gold (default: all 508)")
    return parser


def table(aer: dict[str, float]) -> list[str]:
    """Markdown rows: reading x (each layer, the best head) from the record's AER by name."""
    layers = sorted({int(name.split("@ L")[1].split("H")[0]) for name in aer if "@ L" in name})
    lines = ["| reading | " + " | ".join(f"layer {layer}" for layer in layers)
             + " | best head | last layer's mean |", "|---" * (len(layers) + 3) + "|"]
    for reading in READINGS:
        heads = {name: value for name, value in aer.items()
                 if name.startswith(f"{reading} @ L") and "H" in name.split("@ L")[1]}
        best = min(heads, key=heads.__getitem__, default=None)
        cells = [f"{aer[f'{reading} @ L{layer}']:.3f}" for layer in layers]
        head = "-" if best is None else f"{best.split('@ ')[1]}: {heads[best]:.3f}"
        lines.append(f"| {reading} | " + " | ".join([*cells, head, f"{aer[reading]:.3f}"]) + " |")
    return lines


def main() -> None:
    args = arguments().parse_args()
    torch.set_num_threads(1)
    run = TranslationRun.load(args.run)
    gold = rwth_gold_for_run(run, args.rwth)
    if gold is None:
        raise SystemExit(f"{args.run} does not translate German to English, or {args.rwth} "
                         f"holds no RWTH gold")
    scores = extraction_scores(run, within_reach(run, gold), methods=[], limit=args.pairs)
    aer = scores.to_dict()["aer"]
    print(f"{args.run} on the RWTH gold, {scores.pairs} pairs ({scores.skipped} left out), AER "
          f"(lower is better); the diagonal aligner: {aer['diagonal']:.3f}")
    print("\n".join(table(aer)))


if __name__ == "__main__":
    main()
