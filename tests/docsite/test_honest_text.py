"""What a new user reads about setting up is true: every extra is listed, `make test` says how
long it takes and what it installs as root (and `make test BROWSER=0` installs nothing), the
data a command downloads is not offered to git, and the tutorial promises only the
reproducibility it has."""

import json
import re
import shutil
import subprocess
import tomllib

import pytest

from .test_words import ROOT

README = ROOT / "README.md"
GETTING_STARTED = ROOT / "docs" / "getting-started.md"


def test_getting_started_lists_every_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    text = GETTING_STARTED.read_text(encoding="utf-8")
    missing = [name for name in extras if f"`attnlab[{name}]`" not in text]
    assert not missing, f"docs/getting-started.md does not list the extras {missing}"
    words = {2: "Two", 3: "Three", 4: "Four"}
    assert f"{words[len(extras)]} extras" in text


@pytest.mark.parametrize("path", [README, GETTING_STARTED], ids=lambda path: path.name)
def test_make_test_says_how_long_it_takes_and_what_it_installs(path):
    text = " ".join(path.read_text(encoding="utf-8").split())
    said = re.search(r"`make test` is exactly what (CI|continuous integration) runs.*?"
                     r"`make docs`", text)
    assert said, f"{path.name} says nothing after `make test` is what CI runs"
    said = said.group()
    assert re.search(r"about \d+ minutes", said) and "busy" in said
    assert "as root" in said and "chromium" in said and "150 packages" in said
    assert "`make test BROWSER=0`" in said


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_browser_0_leaves_the_chromium_install_out():
    """`make -n` prints the recipes it would run and runs none of them."""

    def planned(*variables: str) -> str:
        return subprocess.run(["make", "-n", "test", *variables], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout

    assert "apt-get install -y chromium" in planned()
    for value in ("0", "no"):
        plan = planned(f"BROWSER={value}")
        assert "apt-get" not in plan and "pytest" in plan


def test_ci_runs_the_readme_test_command():
    """.ci/run's command is the README's, so what the README says about it holds for CI."""
    command = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert command == "make test"
    assert "make test   #" in README.read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_downloaded_data_and_runs_are_ignored_and_the_code_is_not():
    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", path],
                              cwd=ROOT).returncode == 0

    assert ignored("data/multi30k/train.de.gz") and ignored("runs/demo/run/config.json")
    assert not ignored("src/attnlab/data/new_task.py") and not ignored("tests/data/test_x.py")


def test_the_tutorial_promises_only_the_reproducibility_it_has():
    notebook = json.loads((ROOT / "docs" / "tutorial.ipynb").read_text(encoding="utf-8"))
    text = " ".join(" ".join("".join(cell["source"]) for cell in notebook["cells"]
                             if cell["cell_type"] == "markdown").split())
    assert "same on every machine" not in text
    assert re.search(r"same machine, with the same torch build and thread count, it gives the "
                     r"same numbers", text)
    assert "Another machine, torch build or thread count" in text
