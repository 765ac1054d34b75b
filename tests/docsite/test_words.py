"""What a user reads names the papers and the survey, never the project's own source notes.

attnlab started from a digest of Lilian Weng's "Attention? Attention!" (2018); a user has no
such "seed" text, and no SPEC.md either: the maths is the docs' equations page. Shipped text is
the README, the docs, the package's code and files (docstrings, reports, the explorer's page)
and every `--help`.
"""

import re
from pathlib import Path

from attnlab.cli import build_parser

from .test_site import commands

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md")),
           *sorted((ROOT / "docs").rglob("*.ipynb")),
           *sorted(path for path in (ROOT / "src" / "attnlab").rglob("*")
                   if path.suffix in {".py", ".html", ".js", ".css", ".yaml", ".md"})]
# "the seed" as the source text; a random seed is "a seed", "--seed", "seeds" or "seeded".
SOURCE_NOTES = re.compile(r"(?i:\bseed's\b|\bthe seed\b)|\bSPEC(\.md)?\b")


def hits(name: str, text: str) -> list[str]:
    return [f"{name}:{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if SOURCE_NOTES.search(line)]


def test_no_shipped_text_speaks_of_the_seed_or_spec():
    found = [hit for path in SHIPPED
             for hit in hits(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_no_help_text_speaks_of_the_seed():
    found = [hit for path, parser in commands(build_parser())
             for hit in hits(" ".join(("attnlab", *path, "--help")), parser.format_help())]
    assert not found, "\n".join(found)


def test_the_words_check_can_fail():
    assert hits("x", "Reproduce one of the seed's claims") and hits("y", "see SPEC.md")
    assert not hits("z", "--seed S: the random seed of the split (seeded by --seed)")
