"""`attnlab average --run DIR [--last N] --output DIR`: a run directory whose weights are the
mean of the run's last step checkpoints (train.keep_checkpoints)."""

from __future__ import annotations

import argparse

from .options import positive_int


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "average", help="average a run's last step checkpoints into a new run directory",
        description="Write --output: a run directory (the run's config and vocabularies, and "
        "a last/ checkpoint) whose weights are the element-wise mean of the run's newest step "
        "checkpoints, which a run keeps in DIR/checkpoints/ when trained with "
        "train.keep_checkpoints: N. Every command that takes --run reads it; it cannot be "
        "resumed. Nothing is written when a check fails, and the folder appears whole.")
    parser.add_argument("--run", required=True, metavar="DIR",
                        help="run directory written by attnlab train")
    parser.add_argument("--last", type=positive_int, metavar="N",
                        help="average the newest N step checkpoints (default: all it keeps)")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="the run directory to write (absent or empty)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.recipes import recipe_of_run
    from attnlab.train import RunDir, choose_checkpoint
    from attnlab.train.averaging import average

    choose_checkpoint(RunDir(args.run), None)  # a run, or one sentence saying what it is
    files = recipe_of_run(args.run).run_files
    done = average(args.run, args.output, last=args.last, files=files)
    steps = ", ".join(str(step) for step in done.steps)
    print(f"averaged {len(done.steps)} checkpoints of {args.run} (steps {steps}) into "
          f"{done.output}")
    print(f"read it like a run: attnlab ... --run {done.output}")
    return 0
