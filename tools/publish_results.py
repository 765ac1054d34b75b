"""Publish a suite's report in the documentation: copy the results.md that `attnlab compare`
wrote into docs/results/NAME.md, which docs/results.md includes as it is. The published figures
are then the report's own, never retyped (tests/docsite/test_results.py holds the README's
digest and the results page to them).

    attnlab compare dates --dir runs/compare-dates --report          # writes its results.md
    .venv/bin/python tools/publish_results.py runs/compare-dates dates

Refuses (one sentence, exit 2) a folder without results.md, or a file that is not one compare
wrote (its title line and its Made by command).
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "docs" / "results"


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
    target = PUBLISHED / f"{args.name}.md"
    PUBLISHED.mkdir(exist_ok=True)
    temporary = target.with_suffix(".md.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(target)
    print(f"published {source} as {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
