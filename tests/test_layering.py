"""Imports run one way: the import-linter contracts in pyproject.toml hold for src/attnlab.

A back-arrow (say models importing decode) fails the test named after the contract it breaks,
and the message shows the import chain.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

# import-linter 2.17 needs Python 3.11 (the dev extra installs it there only).
read_configuration = pytest.importorskip("importlinter.api").read_configuration

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = [c["name"] for c in read_configuration(str(PYPROJECT))["contracts_options"]]


@pytest.fixture(scope="module")
def report():
    assert LINT_IMPORTS.is_file(), f"{LINT_IMPORTS} missing: pip install -e '.[dev]'"
    # This tree's sources, not whatever copy is installed; wide lines so names never wrap.
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "500", "NO_COLOR": "1"}
    # --no-cache: nothing written into the tree, no race between pytest-xdist workers.
    command = [str(LINT_IMPORTS), str(PYPROJECT), "--no-cache", "--no-logo"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_there_are_contracts():
    assert len(CONTRACTS) >= 5


@pytest.mark.parametrize("name", CONTRACTS)
def test_contract_is_kept(report, name):
    if f"{name} KEPT" not in report.stdout:
        pytest.fail(report.stdout + report.stderr, pytrace=False)


def test_lint_imports_passes(report):
    if report.returncode != 0:
        pytest.fail(report.stdout + report.stderr, pytrace=False)
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in report.stdout
