"""`attnlab report --run DIR`: one self-contained HTML page about a trained run."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.files import check_outputs

from .options import add_beam, add_quiet, add_run_arguments, check_task


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="write an HTML report of a run (opens offline)",
        description="Write one HTML file with everything inline (no network): the config, "
        "training curves from metrics.jsonl, BLEU/chrF with signatures, BLEU by source length, "
        "AER where gold alignments exist, and heatmaps of sample translations. It evaluates on "
        "--src/--ref, or else on the run's validation split.")
    add_run_arguments(parser)
    parser.add_argument("--output", metavar="FILE",
                        help="HTML file (default: DIR/report.html)")
    parser.add_argument("--src", metavar="FILE", help="source lines to evaluate on, plain or .gz")
    parser.add_argument("--ref", metavar="FILE", help="their references")
    add_beam(parser)
    parser.add_argument("--samples", type=int, default=3, metavar="N",
                        help="heatmaps of the first N sentences (default 3)")
    parser.add_argument("--rwth", metavar="DIR",
                        help="RWTH de-en gold set (default: $ATTNLAB_DATA/rwth-deen-gold for a "
                        "German-English run when set and present; see evaluate)")
    parser.add_argument("--no-rwth", action="store_true", help="skip the RWTH gold set")
    add_quiet(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.translation.evaluate import read_pairs
    from attnlab.translation.golds import rwth_gold_for_run
    from attnlab.translation.loading import load_run
    from attnlab.translation.report import write_run_report

    check_task(args.run, args.checkpoint, "report")
    check_outputs({"--src": args.src, "--ref": args.ref}, {"--output": args.output})
    trained = load_run(args.run, args.checkpoint, args.device)
    sources = references = src_path = None
    if args.src is not None or args.ref is not None:
        sources, references, src_path = read_pairs(trained, args.src, args.ref)
    rwth = None if args.no_rwth else rwth_gold_for_run(trained, args.rwth)
    output = args.output or Path(args.run) / "report.html"
    path = write_run_report(trained, output, sources=sources, references=references,
                            src_path=src_path, ref_path=args.ref, beam=args.beam,
                            samples=args.samples, golds=[rwth] if rwth is not None else [],
                            progress=not args.quiet)
    print(f"report: {path}")
    return 0
