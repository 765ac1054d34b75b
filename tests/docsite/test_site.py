"""The documentation site builds strictly and offline, and its CLI reference is the parsers'.

The build is the one `make docs` runs (warnings are errors); a second build of a copy with a
broken link shows that the strictness really fails. Each build is one test, so the two run on
different workers.
"""

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attnlab
from attnlab.cli import build_parser
from browser import CHROMIUM, CHROMIUM_ARGS, SHOTS, missing_browser

pytestmark = pytest.mark.slow  # each test builds the whole site with sphinx

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGES = sorted(path.parent.name for path in (ROOT / "src" / "attnlab").glob("*/__init__.py")
                  if "__all__" in path.read_text(encoding="utf-8"))


def build(source: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """`make docs`'s command, into out; offline (no proxy, nothing to fetch)."""
    env = {key: value for key, value in os.environ.items() if "proxy" not in key.lower()}
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W", "--keep-going", "-q",
         "-d", str(out / ".doctrees"), *options, str(source), str(out)],
        capture_output=True, text=True, env=env, timeout=300)


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, its parser) for attnlab and every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub is not parser:
                    yield from commands(sub, (*path, name))


def flags(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of this parser, -h/--help aside."""
    return {option for action in parser._actions for option in action.option_strings
            if option not in ("-h", "--help")}


def test_the_site_builds_strictly_offline_with_every_page_and_command(tmp_path):
    site = tmp_path / "site"
    result = build(DOCS, site)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr and "ERROR" not in result.stderr, result.stderr

    for page in ["index", "getting-started", "tutorial", "translation", "captioning", "reading",
                 "equations", "compare", "explorer", "sharing", "results", "performance",
                 "contributing", "changelog", "reference/cli", "reference/api/index",
                 *(f"reference/api/{package}" for package in ["attnlab", *PACKAGES])]:
        assert (site / f"{page}.html").is_file(), f"no page {page}"
    # Every public package has its API page, and each page documents its public names.
    for package in PACKAGES:
        module = __import__(f"attnlab.{package}", fromlist=["__all__"])
        page = (site / "reference" / "api" / f"{package}.html").read_text(encoding="utf-8")
        documented = set(re.findall(rf'id="attnlab\.{package}\.([A-Za-z_]\w*)"', page))
        missing = set(module.__all__) - documented - {"LanguageModelConfig"}
        assert not missing, f"attnlab.{package}: {sorted(missing)} not in its API page"
    assert 'id="attnlab.load"' in (site / "reference/api/attnlab.html").read_text()
    assert attnlab.__version__ in (site / "index.html").read_text(encoding="utf-8")

    # Offline: no page loads anything from elsewhere; the equations' MathJax is in the site.
    for page in site.rglob("*.html"):
        loaded = re.findall(r'<(?:script|link|img)\b[^>]*?(?:src|href)="(https?:[^"]+)"',
                            page.read_text(encoding="utf-8"))
        assert not loaded, f"{page.relative_to(site)} fetches {loaded}"
    equations = (site / "equations.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-chtml.js" in equations and "\\(" in equations
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()

    # The CLI reference: every command of `attnlab --help`, each with every one of its flags,
    # in its own section (sphinx-argparse names it attnlab-<command path>).
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    found = list(commands(build_parser()))
    ids = ["-".join(("attnlab", *path)) for path, _ in found]
    starts = {match.group(1): match.start()
              for match in re.finditer(r'<section id="([^"]+)"', page)}
    ordered = sorted(starts[name] for name in ids if name in starts)
    for (path, parser), name in zip(found, ids, strict=True):
        if not path:
            continue
        prog = " ".join(("attnlab", *path))
        assert name in starts, f"{prog}: no section in the CLI reference"
        later = [start for start in ordered if start > starts[name]]
        section = re.sub(r"<[^>]+>", "", page[starts[name]:min(later, default=None)])
        shown = re.sub(r"\s+", " ", html.unescape(section))  # highlighting splits words in spans
        assert prog in shown, f"{prog}: its section does not show its usage"
        for flag in sorted(flags(parser)):
            assert flag in shown, f"{prog} {flag}: missing from the CLI reference"

    if missing_browser() is None:  # without chromium the rest holds, only unseen
        look_at(site)


def look_at(site: Path) -> None:
    """Open pages of the site in headless chromium: the equations typeset offline (MathJax
    from the site), and a screenshot of each page goes to build/screenshots/."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for name in ["index", "equations", "compare", "reference/api/attention", "reference/cli"]:
            page.goto((site / f"{name}.html").as_uri())
            if name == "equations":
                page.wait_for_selector("mjx-container", timeout=20_000)
                assert page.locator("mjx-container").count() > 20
                assert not page.locator("mjx-merror").count(), "an equation does not parse"
            page.screenshot(path=SHOTS / f"site-{name.replace('/', '-')}.png", full_page=True)
        browser.close()


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    """The strictness is real: one broken page link and one missing anchor each fail it."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path / "CHANGELOG.md")
    page = tmp_path / "docs" / "getting-started.md"
    page.write_text(page.read_text(encoding="utf-8")
                    + "\nSee [the lost page](no-such-page.md) and "
                    "[a lost heading](equations.md#no-such-heading).\n", encoding="utf-8")
    # The API reference is left out to keep this quick; its pages are not what is tested here.
    result = build(tmp_path / "docs", tmp_path / "site",
                   "-D", "exclude_patterns=_build,reference/api/*")
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if "getting-started.md" in line]
    assert any("no-such-page" in line for line in lines), result.stderr
    assert any("no-such-heading" in line for line in lines), result.stderr
