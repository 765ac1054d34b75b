"""`attnlab data {multi30k,multi30k-long,rwth-gold,wmt-news,dates}`: fetch Multi30k, make its
length-stress set, fetch the RWTH gold alignments and the WMT news test sets, generate the dates
task."""

from __future__ import annotations

import argparse

from attnlab.errors import ConfigError

from . import names
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
        help=f"source-target languages, from {', '.join(names.MULTI30K_LANGUAGES)} "
        "(default: de-en)",
    )
    add_source_options(fetch, names.MULTI30K_URL)
    fetch.set_defaults(func=run_multi30k)
    add_long_parser(datasets)
    add_rwth_parser(datasets)
    add_wmt_news_parser(datasets)

    generate = datasets.add_parser(
        "dates",
        help="generate the dates task (dates in 8 languages -> ISO, with gold alignments)",
        description="Write {train,val,test}.{src,tgt,align} and meta.json into --dest: dates "
        f"of the years --years ({names.DATES_RECENT_SHARE:.0%} of them from 1950-2049 when the "
        "range reaches beyond it), and a share --not-dates of sources that are no date, whose "
        f"target is {names.NOT_A_DATE!r}. --years 1950-2049 --not-dates 0 is the task as first "
        "made (the dates compare suite's).",
    )
    generate.add_argument("--dest", required=True, help="output directory")
    generate.add_argument("--size", type=int, default=20000, help="examples in all (default 20000)")
    generate.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    generate.add_argument("--years", type=_years, default=(names.DATES_FIRST_YEAR,
                                                           names.DATES_LAST_YEAR),
                          metavar="FIRST-LAST", help="the years of the dates (default "
                          f"{names.DATES_FIRST_YEAR}-{names.DATES_LAST_YEAR})")
    generate.add_argument("--not-dates", type=_share, default=names.DATES_NOT_DATES,
                          metavar="SHARE", help="share of sources that are no date, 0 to 0.5 "
                          "(default %(default)g)")
    generate.set_defaults(func=run_dates)
    add_shapes_parser(datasets)


def run_multi30k(args: argparse.Namespace) -> int:
    from attnlab.data import multi30k

    pair = multi30k.parse_pair(args.pair)
    multi30k.fetch_multi30k(args.dest, pair=pair, base_url=args.base_url, from_dir=args.from_dir)
    print(f"Multi30k {'-'.join(pair)} is in {args.dest}")
    return 0


def add_source_options(parser: argparse.ArgumentParser, default_url: str,
                       files: str = "the files") -> None:
    """A downloader's --from DIR (a local copy instead) and --base-url."""
    parser.add_argument("--from", dest="from_dir", metavar="DIR",
                        help=f"copy a local copy of {files} instead")
    parser.add_argument("--base-url", default=default_url, help="download from here")


def add_rwth_parser(datasets: argparse._SubParsersAction) -> None:
    gold = datasets.add_parser(
        "rwth-gold",
        help="download the RWTH German-English gold word alignments (checksum-verified)",
        description=f"Download test.de-en and deen.talp ({names.RWTH_PAIRS} Europarl sentence "
        "pairs with hand-made word alignments; Luong et al. 2015, Table 6) into --dest, for "
        "`evaluate --rwth DIR` and `report --rwth DIR`; files already there with the right "
        "checksum are kept.",
    )
    gold.add_argument("--dest", required=True, help="directory for the two files")
    add_source_options(gold, names.RWTH_URL)
    gold.set_defaults(func=run_rwth)


def run_rwth(args: argparse.Namespace) -> int:
    from attnlab.data import rwth

    rwth.fetch_rwth_gold(args.dest, base_url=args.base_url, from_dir=args.from_dir)
    print(f"RWTH German-English gold alignments are in {args.dest} (use --rwth {args.dest})")
    return 0


def add_wmt_news_parser(datasets: argparse._SubParsersAction) -> None:
    news = datasets.add_parser(
        "wmt-news",
        help="download the WMT news test sets 2008-2018, German-English (checksum-verified)",
        description="Download the WMT news test sets 2008-2018 (32,746 German-English pairs, "
        "news text: the nearest domain to the RWTH Europarl gold alignments available here) "
        "as {set}.de.gz / {set}.en.gz into --dest, then write train.de.gz / train.en.gz from "
        f"every set but {names.WMT_NEWS_VALID} (validation) and {names.WMT_NEWS_TEST} (test), "
        "without repeated pairs or pairs sharing a side with those two. Train on it with "
        f"data.dir: DEST, data.valid: {names.WMT_NEWS_VALID}, data.test: {names.WMT_NEWS_TEST}. "
        "Files already there with the right checksum are kept.",
    )
    news.add_argument("--dest", required=True, help="directory for the .gz files")
    add_source_options(news, names.WMT_NEWS_URL, "the {set}.{de,en}.gz files")
    news.set_defaults(func=run_wmt_news)


def run_wmt_news(args: argparse.Namespace) -> int:
    from attnlab.data import wmt_news

    wmt_news.fetch_wmt_news(args.dest, base_url=args.base_url, from_dir=args.from_dir)
    return 0


def add_long_parser(datasets: argparse._SubParsersAction) -> None:
    long = datasets.add_parser(
        "multi30k-long",
        help="Multi30k with consecutive pairs joined: a sentence-length stress set",
        description="Join 1..--max-join consecutive pairs of every Multi30k split in --from "
        "(exact translations still) into long examples, written to --dest under the Multi30k "
        "file names with meta.json; for Bahdanau et al. 2015 Fig. 2 (BLEU against length).",
    )
    long.add_argument("--from", dest="from_dir", metavar="DIR", required=True,
                      help="the Multi30k folder, e.g. data/multi30k")
    long.add_argument("--dest", required=True, help="output directory")
    long.add_argument("--pair", default="de-en",
                      help="source-target languages, from "
                      f"{', '.join(names.MULTI30K_LANGUAGES)} (default: de-en)")
    long.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    long.add_argument("--max-join", type=int, default=4,
                      help="most pairs joined into one example (default 4)")
    long.set_defaults(func=run_multi30k_long)


def run_multi30k_long(args: argparse.Namespace) -> int:
    from attnlab.data import multi30k, multi30k_long

    pair = multi30k.parse_pair(args.pair)
    stats = multi30k_long.make_long_multi30k(args.from_dir, args.dest, pair=pair,
                                             seed=args.seed, max_join=args.max_join)
    for split, split_stats in stats.items():
        print(long_summary(split, split_stats))
    print(f"Multi30k {'-'.join(pair)} length-stress set (seed {args.seed}, max join "
          f"{args.max_join}) is in {args.dest}")
    return 0


def long_summary(split: str, stats: dict) -> str:
    """'train: 29,000 pairs -> 11,6xx examples, source words median 31, max 1xx, ...'."""
    line = f"{split}: {stats['pairs']:,} pairs -> {stats['examples']:,} examples"
    words = stats["source_words"]
    if not stats["examples"]:
        return line
    return (f"{line}, source words median {words['median']:g}, max {words['max']:,}, "
            f"{words['at_least_40']:,} with >= 40 words")


def run_dates(args: argparse.Namespace) -> int:
    from attnlab.data import dates

    first, last = args.years
    world = dates.DateWorld(first, last, not_dates=args.not_dates)
    sizes = dates.write_dates(args.dest, size=args.size, seed=args.seed, world=world)
    counts = ", ".join(f"{name} {count}" for name, count in sizes.items())
    print(f"dates task ({world.describe()}, seed {args.seed}) written to {args.dest}: {counts}")
    return 0


def _years(text: str) -> tuple[int, int]:
    from attnlab.data import dates

    try:
        return dates.parse_years(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _share(text: str) -> float:
    try:
        share = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    from attnlab.data import dates

    try:
        return dates.DateWorld(not_dates=share).not_dates
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
