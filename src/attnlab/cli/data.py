"""`attnlab data {multi30k,dates}`: fetch Multi30k, generate the dates task."""

from __future__ import annotations

import argparse

from attnlab.data import dates, multi30k

from .caption import add_shapes_parser


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help="download or generate datasets")
    datasets = parser.add_subparsers(dest="dataset", required=True, metavar="DATASET")

    fetch = datasets.add_parser(
        "multi30k",
        help="download Multi30k task 1 (raw files, checksum-verified)",
        description="Download the six Multi30k task-1 files of one language pair into --dest; "
        "files already there with the right checksum are kept.",
    )
    fetch.add_argument("--dest", required=True, help="directory for the .gz files")
    fetch.add_argument(
        "--pair",
        default="de-en",
        help=f"source-target languages, from {', '.join(multi30k.LANGUAGES)} (default: de-en)",
    )
    fetch.add_argument(
        "--from", dest="from_dir", metavar="DIR", help="copy a local copy of the files instead"
    )
    fetch.add_argument("--base-url", default=multi30k.DEFAULT_URL, help="download from here")
    fetch.set_defaults(func=run_multi30k)

    generate = datasets.add_parser(
        "dates",
        help="generate the dates task (dates in 8 languages -> ISO, with gold alignments)",
        description="Write {train,val,test}.{src,tgt,align} and meta.json into --dest.",
    )
    generate.add_argument("--dest", required=True, help="output directory")
    generate.add_argument("--size", type=int, default=20000, help="examples in all (default 20000)")
    generate.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    generate.set_defaults(func=run_dates)
    add_shapes_parser(datasets)


def run_multi30k(args: argparse.Namespace) -> int:
    pair = multi30k.parse_pair(args.pair)
    multi30k.fetch_multi30k(args.dest, pair=pair, base_url=args.base_url, from_dir=args.from_dir)
    print(f"Multi30k {'-'.join(pair)} is in {args.dest}")
    return 0


def run_dates(args: argparse.Namespace) -> int:
    sizes = dates.write_dates(args.dest, size=args.size, seed=args.seed)
    counts = ", ".join(f"{name} {count}" for name, count in sizes.items())
    print(f"dates task (seed {args.seed}) written to {args.dest}: {counts}")
    return 0
