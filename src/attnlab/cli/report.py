"""`attnlab report --run DIR`: one self-contained HTML page about a trained run."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import check_outputs

from .options import add_beam, add_quiet, add_run_arguments, whole_number


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
    parser.add_argument("--samples", type=whole_number(0), default=3, metavar="N",
                        help="heatmaps of the first N sentences (default 3)")
    parser.add_argument("--rwth", metavar="DIR",
                        help="RWTH de-en gold set (default: $ATTNLAB_DATA/rwth-deen-gold for a "
                        "German-English run when set and present; see evaluate)")
    parser.add_argument("--no-rwth", action="store_true", help="skip the RWTH gold set")
    add_quiet(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import load, recipe_of_run
    from attnlab.train.capabilities import Reports

    recipe = recipe_of_run(args.run, args.checkpoint)
    if not issubclass(recipe.run_class, Reports):
        raise UserError(f"{args.run} is a {recipe.title} run, which has no HTML report; use "
                        f"{recipe.commands['report']} --run {args.run}")
    check_outputs({"--src": args.src, "--ref": args.ref}, {"--output": args.output})
    trained = load(args.run, checkpoint=args.checkpoint, device=args.device)
    assert isinstance(trained, Reports)  # its class was checked above
    path = trained.report(args.output or Path(args.run) / "report.html", src=args.src,
                          ref=args.ref, rwth=args.rwth, no_rwth=args.no_rwth, beam=args.beam,
                          samples=args.samples, progress=not args.quiet)
    print(f"report: {path}")
    return 0
