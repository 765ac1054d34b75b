"""`attnlab demo`: a quick look at attnlab."""

from __future__ import annotations

import argparse

from attnlab.tour import attention_tour


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="a quick look at the attention family")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(attention_tour())
    return 0
