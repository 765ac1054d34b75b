"""`attnlab average --run DIR [--run DIR ...] [--last N] --output DIR`: a run directory whose
weights are the mean of the newest step checkpoints (train.keep_checkpoints) of one run, or of
several runs that started from the same weights."""

from __future__ import annotations

import argparse

from .options import positive_int


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "average", help="average a run's last step checkpoints into a new run directory",
        description="Write --output: a run directory (the run's config and vocabularies, and "
        "a last/ checkpoint) whose weights are the element-wise mean of the run's newest step "
        "checkpoints, which a run keeps in DIR/checkpoints/ when trained with "
        "train.keep_checkpoints: N. Given --run more than once, the mean is over every run's "
        "newest checkpoints (each counts once; the first run gives the config and "
        "vocabularies), for runs with the same model, vocabularies and train.seed: separately "
        "initialised runs are refused, since their mean is not a working model (ensemble them "
        "instead). Every command that takes --run reads it; it cannot be resumed. Nothing is "
        "written when a check fails, and the folder appears whole.")
    parser.add_argument("--run", required=True, metavar="DIR", action="append",
                        help="run directory written by attnlab train; give it more than once "
                        "to average several runs' checkpoints together")
    parser.add_argument("--last", type=positive_int, metavar="N",
                        help="average the newest N step checkpoints of each run (default: all "
                        "it keeps)")
    parser.add_argument("--output", required=True, metavar="DIR",
                        help="the run directory to write (absent or empty)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from attnlab.errors import CheckpointError
    from attnlab.recipes import recipe_of_run
    from attnlab.train import RunDir, choose_checkpoint
    from attnlab.train.averaging import average

    recipes = []
    for path in args.run:
        choose_checkpoint(RunDir(path), None)  # a run, or one sentence saying what it is
        recipes.append(recipe_of_run(path))
    for path, recipe in zip(args.run[1:], recipes[1:], strict=True):
        if recipe is not recipes[0]:
            raise CheckpointError(f"{args.run[0]} is a {recipes[0].title} run and {path} a "
                                  f"{recipe.title} run; average runs of one task")
    done = average(args.run, args.output, last=args.last, files=recipes[0].run_files)
    each = [f"{path} (steps {', '.join(str(step) for step in steps)})"
            for path, steps in done.runs]
    runs = ", ".join(each[:-1]) + " and " + each[-1] if len(each) > 1 else each[0]
    print(f"averaged {len(done.steps)} checkpoints of {runs} into {done.output}")
    print(f"read it like a run: attnlab ... --run {done.output}")
    return 0
