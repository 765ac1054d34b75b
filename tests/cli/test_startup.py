"""A command starts at once: `attnlab --version`, `attnlab --help` and every command's `--help`
import no torch (about 2 s of a 2-core machine's start; without it `attnlab --version` takes
about 0.1 s); a command imports what it uses when it runs. What the parser shows of modules that
import torch is copied into attnlab.cli.names, and held equal to its source here."""

import json
import subprocess
import sys

from attnlab.cli import build_parser, names

from .test_grammar import walk

# In a fresh interpreter: each command line in turn, its exit code and whether torch was
# imported by then.
HELP_EACH = """
import contextlib, io, json, sys
from attnlab.cli import main
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
    print(json.dumps([argv, code, "torch" in sys.modules]))
"""


def help_lines() -> list[list[str]]:
    """`--version`, `--help` and `X ... --help` for every command and sub-command."""
    commands = [list(path[1:]) for path, _ in walk(build_parser())]
    return [["--version"], *([*command, "--help"] for command in commands)]


def test_help_and_version_import_no_torch():
    lines = help_lines()
    assert len(lines) > 20  # the walk found the commands
    result = subprocess.run([sys.executable, "-c", HELP_EACH, json.dumps(lines)],
                            capture_output=True, text=True, timeout=120, check=True)
    ran = [json.loads(line) for line in result.stdout.splitlines()]
    assert [argv for argv, _, _ in ran] == lines
    assert [argv for argv, code, _ in ran if code != 0] == []
    # The first command line after which torch was loaded (`python -X importtime -m attnlab
    # ARGS` shows who imported it): a torch module imported at the top of a cli module, or by
    # an add_parser function, instead of inside the function that runs the command.
    first = next((argv for argv, _, torch in ran if torch), None)
    assert first is None, f"`attnlab {' '.join(first)}` imported torch"


def test_python_m_attnlab_version_imports_no_torch():
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "attnlab", "--version"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip().startswith("attnlab ")
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert "attnlab.cli" in imported  # the listing is read
    assert {name for name in imported if name.split(".")[0] == "torch"} == set()


def test_the_copied_names_equal_their_sources():
    from attnlab.data import dates, multi30k, rwth, wmt_news
    from attnlab.translation.alignment import METHODS

    sources = {
        "SYMMETRISATIONS": tuple(METHODS),
        "MULTI30K_LANGUAGES": multi30k.LANGUAGES,
        "MULTI30K_URL": multi30k.DEFAULT_URL,
        "RWTH_URL": rwth.DEFAULT_URL,
        "RWTH_PAIRS": rwth.PAIRS,
        "WMT_NEWS_URL": wmt_news.DEFAULT_URL,
        "WMT_NEWS_VALID": wmt_news.VALID,
        "WMT_NEWS_TEST": wmt_news.TEST,
        "DATES_RECENT_SHARE": dates.RECENT_SHARE,
        "NOT_A_DATE": dates.NOT_A_DATE,
        "DATES_FIRST_YEAR": dates.WIDE.first_year,
        "DATES_LAST_YEAR": dates.WIDE.last_year,
        "DATES_NOT_DATES": dates.WIDE.not_dates,
    }
    copies = {name: value for name, value in vars(names).items() if name.isupper()}
    assert copies == sources  # a new copy in names.py is checked here too
