"""Published results cannot drift from the reports: docs/results/NAME.md are the results.md files
`attnlab compare` wrote (tools/publish_results.py copies them), docs/results.md includes each as
it is, and every figure that the README's results digest quotes from one is in it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = sorted((ROOT / "docs" / "results").glob("*.md"))
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
DIGEST_LINK = re.compile(r"\(docs/results/(?P<name>[\w-]+)\.md\)")


def digest_lines() -> list[tuple[str, Path]]:
    """The README's digest lines that name a published report, with that report."""
    found = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        match = DIGEST_LINK.search(line)
        if match:
            found.append((line, ROOT / "docs" / "results" / f"{match['name']}.md"))
    return found


def quoted_numbers(line: str) -> list[str]:
    """The figures a digest line quotes (decimals), its links left out."""
    text = re.sub(r"\([^)]*\.md[^)]*\)", "", line)
    return [number for number in NUMBER.findall(text) if "." in number]


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda path: path.name)
def test_a_published_report_is_one_compare_wrote_and_the_page_includes_it(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("### ") and lines[2].startswith("`attnlab compare "), path
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert f"```{{include}} results/{path.name}\n```" in page, f"results.md omits {path.name}"


def test_every_figure_the_digest_quotes_is_in_its_report():
    for line, report in digest_lines():
        assert report.is_file(), f"the README links {report.name}, which is not published"
        text = report.read_text(encoding="utf-8")
        missing = [number for number in quoted_numbers(line) if number not in text]
        assert not missing, f"{report.name} does not say {missing}: {line}"


def test_the_check_can_fail():
    line = "- dates: AER 0.123 and 0.456 ([report](docs/results/dates.md))"
    assert quoted_numbers(line) == ["0.123", "0.456"]


def reading_paragraphs() -> list[str]:
    """The prose of docs/explain.md's "Per mechanism" section (its included reports left out):
    the plain reading of the published figures."""
    text = (ROOT / "docs" / "explain.md").read_text(encoding="utf-8")
    section = text[text.index("## Per mechanism\n"):]
    end = section.find("\n## ")
    section = section if end == -1 else section[:end]   # up to the next section
    section = re.sub(r"```\{include\}.*?```", "", section, flags=re.S)
    return [line for line in section.splitlines() if line and not line.startswith("#")]


def test_every_figure_the_explanation_page_reads_is_in_a_published_report():
    published = {number for path in PUBLISHED
                 for number in NUMBER.findall(path.read_text(encoding="utf-8"))}
    quoted = [(number, line) for line in reading_paragraphs()
              for number in quoted_numbers(line)]
    assert quoted, "the reading quotes no figure"
    missing = [(number, line) for number, line in quoted if number not in published]
    assert not missing, f"not in any published report: {missing}"
