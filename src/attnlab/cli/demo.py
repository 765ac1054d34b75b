"""`attnlab demo`."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="a quick look at attnlab")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return 0
