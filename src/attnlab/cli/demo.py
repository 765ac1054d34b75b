"""`attnlab demo`: train a model on the dates task and show what its attention learned."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="train on the dates task for ~2 minutes and show the attention",
        description="Generate the dates task, train a Bahdanau model for a few minutes, print "
        "translations and exact-match accuracy, and write an alignment heatmap.")
    parser.add_argument("--dir", default="runs/demo", help="where data and run go")
    parser.add_argument("--minutes", type=float, default=2.0, help="training time budget")
    parser.add_argument("--size", type=int, default=10000,
                        help="dates to generate (10%% are held out for the test)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--tour", action="store_true",
                        help="only print the attention family on a toy sentence (2 seconds)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tour:
        from attnlab.tour import attention_tour

        print(attention_tour())
        return 0
    from attnlab.translation.demo import run_demo

    run_demo(args.dir, minutes=args.minutes, size=args.size, threads=args.threads)
    return 0
