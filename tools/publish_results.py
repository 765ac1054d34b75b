"""Publish a suite's report in the documentation: copy the results.md that `attnlab compare`
wrote into docs/results/NAME.md, which docs/results.md includes as it is. The published figures
are then the report's own, never retyped (tests/docsite/test_results.py holds the README's
digest and the results page to them).

    attnlab compare dates --dir runs/compare-dates --report          # writes its results.md
    .venv/bin/python tools/publish_results.py runs/compare-dates dates

Published text names no folder of the machine that made it: a data folder given by absolute
path (`--data /somewhere/multi30k`) is shown as the folder the documentation's `attnlab data ...
--dest` command writes (`data/multi30k`; the files are the same, checked by their digests), and
any other absolute path is refused, so a reader can paste every command. Refuses (one
sentence, exit 2) a folder without results.md, or a file that is not one compare wrote (its
title line and its Made by command).
"""

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "docs" / "results"
# The folders `attnlab data` makes, by the name the docs' commands give them (docs/compare.md).
DATA_FOLDERS = {"multi30k": "data/multi30k", "rwth-deen-gold": "data/rwth-deen-gold",
                "dates": "data/dates",
                "wmt-news-deen": "data/wmt-news-deen", "multi30k-long": "data/multi30k-long"}
# An absolute path: a slash after a space, a bracket, a quote or a line's start.
ABSOLUTE = re.compile(r"""(?<![\w.~/-])/(?:[\w.+-]+/)*[\w.+-]+/?""")


def portable(text: str) -> str:
    """text with every absolute data folder shown as its `attnlab data` folder; a ValueError
    naming the first other absolute path."""
    def replace(match: re.Match) -> str:
        folder = match.group().rstrip("/").rsplit("/", 1)[-1]
        if folder not in DATA_FOLDERS:
            raise ValueError(match.group())
        return DATA_FOLDERS[folder]
    return ABSOLUTE.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", help="the suite's --dir, holding results.md")
    parser.add_argument("name", help="the published file's name, docs/results/NAME.md")
    args = parser.parse_args(argv)
    source = Path(args.directory) / "results.md"
    if not source.is_file():
        print(f"publish_results: {source} does not exist; run attnlab compare SUITE --dir "
              f"{args.directory} --report first", file=sys.stderr)
        return 2
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines()
    if len(lines) < 3 or not lines[0].startswith("### ") or \
            not lines[2].startswith("`attnlab compare "):
        print(f"publish_results: {source} is not a results.md that attnlab compare wrote",
              file=sys.stderr)
        return 2
    try:
        text = portable(text)
    except ValueError as error:
        print(f"publish_results: {source} names the folder {error} of this machine, which a "
              f"reader does not have; run compare with folders relative to the checkout",
              file=sys.stderr)
        return 2
    target = PUBLISHED / f"{args.name}.md"
    PUBLISHED.mkdir(exist_ok=True)
    temporary = target.with_suffix(".md.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(target)
    print(f"published {source} as {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
