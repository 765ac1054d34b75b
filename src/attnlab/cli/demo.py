"""`attnlab demo`: train a model on the dates task and show what its attention learned."""

from __future__ import annotations

import argparse

from .options import positive_float, positive_int

# attnlab.translation.demo's MINUTES, TARGET and THREADS (not imported: it imports torch)
MINUTES, TARGET, THREADS = 5.0, 99.0, 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="train on the dates task (a few minutes) and show the attention",
        description="Generate the dates task (dates of 1000-2099 in eight languages, half of "
        "them 1950-2049, and 5% of sources that are no date, answered 'not a date'), train a "
        "Bahdanau model until 99% of the validation examples come out exactly right (or "
        "--minutes run out), print translations and exact-match accuracy, and write an "
        "alignment heatmap. The model trains into DIR/run.new and replaces DIR/run only when "
        "training ends by itself; the one it replaces is kept as DIR/run.previous. Exits 1 "
        "when training stopped short of the target.")
    parser.add_argument("--dir", default="runs/demo", help="where data and run go")
    parser.add_argument("--minutes", type=positive_float, default=MINUTES,
                        help="the most minutes to train (default %(default)g)")
    parser.add_argument("--target", type=_percent, default=TARGET,
                        help="validation exact match (percent) that ends training "
                        "(default %(default)g)")
    parser.add_argument("--size", type=positive_int, default=10000,
                        help="dates to generate (10%% are held out for the test)")
    parser.add_argument("--threads", type=positive_int, default=THREADS,
                        help="torch threads (default %(default)s: 2 are a little faster on idle "
                        "cores, and many times slower when other programs use them)")
    parser.add_argument("--tour", action="store_true",
                        help="only print the attention family on a toy sentence (2 seconds)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tour:
        from attnlab.tour import attention_tour

        print(attention_tour())
        return 0
    from attnlab.translation.demo import run_demo

    result = run_demo(args.dir, minutes=args.minutes, size=args.size, threads=args.threads,
                      target=args.target)
    return 0 if result.reached else 1


def _percent(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not a percentage from 0 to 100")
    return value
