"""`attnlab align --src FILE --tgt FILE --output FILE`: eflomal word links of a parallel corpus,
made once (cached by the files' sha256), for train.guided_alignment.links. Pairs longer than
eflomal aligns are named, and make the exit status 1 (the file is written with their lines
empty: the pairs that were linked are usable)."""

from __future__ import annotations

import argparse
import sys

from . import names


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "align", help="word-align a parallel corpus with eflomal, for guided alignment",
        description="Align --src and --tgt (plain or .gz, line k with line k; words are "
        "whitespace tokens, lowercased) with eflomal (Östling & Tiedemann 2017) in both "
        "directions, symmetrised, and write one Pharaoh line of 0-based source-target links "
        "per pair to --output, and FILE.json beside it with each file's sha256. Run again on "
        "files of the same content it keeps FILE as it is; training with "
        "train.guided_alignment: {links: FILE} checks FILE.json against its data. A pair "
        "with more than 1,023 words on a side (the most eflomal aligns) gets an empty line; "
        "such pairs are named by line and the exit status is 1. Needs eflomal: pip install "
        "'attnlab[aligner]'.")
    parser.add_argument("--src", required=True, metavar="FILE", help="source side")
    parser.add_argument("--tgt", required=True, metavar="FILE", help="target side")
    parser.add_argument("--output", required=True, metavar="FILE",
                        help="the links file (written whole), e.g. DATA/train.de-en.links")
    parser.add_argument("--method", choices=sorted(names.SYMMETRISATIONS),
                        default="grow-diag-final-and",
                        help="symmetrisation heuristic (Koehn et al. 2003; default "
                        "grow-diag-final-and)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.files import check_outputs
    from attnlab.translation.alignment import align_corpus, sidecar

    check_outputs({"--src": args.src, "--tgt": args.tgt},
                  {"--output": args.output, "its FILE.json": str(sidecar(args.output))})
    done = align_corpus(args.src, args.tgt, args.output, method=args.method)
    linked = done.pairs - len(done.unlinked)
    pairs = f"{done.pairs:,}" if not done.unlinked else f"{linked:,} of {done.pairs:,}"
    if done.cached:
        print(f"{done.path}: already made from these files (links of {pairs} pairs, "
              f"{args.method}); kept as it is")
    else:
        print(f"{done.path}: links of {pairs} pairs (eflomal, {args.method})")
    print(f"guide training with: --set train.guided_alignment.links={done.path}")
    if done.unlinked:
        print(f"attnlab: error: {done.unlinked_summary()}", file=sys.stderr)
        return 1
    return 0
