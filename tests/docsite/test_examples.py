"""The runnable examples of the README and the documentation run, and print what they say.

A runnable example is a fenced block marked `pycon` (`>>> ` lines, each followed by the output
it prints, as in a Python session) or `console` (`$ attnlab ...` lines, each followed by its
output). A page's examples run in order in one namespace, in a fresh working directory, and
their output is compared as doctest compares it (`...` matches anything, runs of whitespace are
equal). Blocks marked `python` or `bash` are shown, not run.
"""

import contextlib
import doctest
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from attnlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<kind>pycon|console)[ \t]*\n"
                   r"(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Example:
    page: Path
    line: int       # of the block's first line, 1-based
    kind: str       # "pycon" or "console"
    body: str


def examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    return [Example(page, text.count("\n", 0, match.start("body")) + 1, match["kind"],
                    match["body"]) for match in FENCE.finditer(text)]


def console_steps(body: str) -> list[tuple[str, str]]:
    """(command, expected output) for each `$ ` line of a console block; a line ending in a
    backslash continues on the next."""
    steps: list[tuple[str, list[str]]] = []
    lines = iter(body.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"a console block starts with output, not `$ `: {line!r}")
    return [(command, "\n".join(output).strip() + "\n") for command, output in steps]


def run_console(example: Example) -> list[str]:
    """The failures of one console block: `attnlab` commands only, run in this process."""
    failures = []
    checker = doctest.OutputChecker()
    for command, expected in console_steps(example.body):
        argv = shlex.split(command)
        assert argv[0] == "attnlab", f"{example.page.name}:{example.line}: only attnlab runs"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv[1:])
            except SystemExit as stop:  # argparse's --help and --version end this way
                status = stop.code or 0
        got = out.getvalue() + err.getvalue()
        if status != 0 or not checker.check_output(expected, got, FLAGS):
            failures.append(f"{example.page.name}:{example.line}: $ {command} (exit {status})\n"
                            f"expected:\n{expected}got:\n{got}")
    return failures


def run_pycon(example: Example, names: dict) -> list[str]:
    test = doctest.DocTestParser().get_doctest(example.body, names, example.page.name,
                                               str(example.page), example.line)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.append, clear_globs=False)
    return ["".join(report)] if runner.failures else []


def run_page(page: Path) -> list[str]:
    names: dict = {"__name__": "__example__"}
    torch.manual_seed(0)
    failures: list[str] = []
    for example in examples(page):
        if example.kind == "console":
            failures += run_console(example)
        else:
            failures += run_pycon(example, names)
    return failures


RUNNABLE = [page for page in PAGES if examples(page)]


def test_there_are_runnable_examples_in_the_docs():
    """So that a change of the fence syntax cannot quietly turn every example off."""
    found = [example for page in PAGES for example in examples(page)]
    assert {example.kind for example in found} == {"pycon", "console"}
    assert len({example.page for example in found}) >= 3, [str(p) for p in RUNNABLE]


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_the_examples_print_what_they_say(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    failures = run_page(page)
    assert not failures, "\n\n".join(failures)


def test_a_wrong_stated_output_fails(tmp_path, monkeypatch):
    """The runner can fail: a stated output that is not what the code prints is reported."""
    monkeypatch.chdir(tmp_path)
    page = tmp_path / "page.md"
    page.write_text("```pycon\n>>> 1 + 1\n3\n```\n\n```console\n$ attnlab --version\n"
                    "attnlab 0.0.0-not-this\n```\n", encoding="utf-8")
    failures = run_page(page)
    assert len(failures) == 2
    assert "1 + 1" in failures[0] and "attnlab --version" in failures[1]
