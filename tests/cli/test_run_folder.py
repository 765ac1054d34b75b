"""`--run` given something that is not a run: the folder above a run names the run in it, a
folder of several runs lists some, a file or a checkpoint folder says so; in one sentence,
before any other check, with nothing written."""

import shutil

import pytest

from attnlab.cli import main

from .test_grammar import COMMANDS


def refusal(capsys, command, run, out):
    """stderr of COMMAND with --run `run` and its other output in a folder that does not
    exist (a second mistake that must not be the one reported); stdout must stay empty."""
    argv = [str(run) if part == "RUN" else str(out) if part == "OUT" else part
            for part in COMMANDS[command]]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


@pytest.fixture
def holding_one(deen_run, tmp_path):
    """A folder holding one run, `trained`, as `attnlab train runs/trained` leaves runs/."""
    folder = tmp_path / "runs"
    shutil.copytree(deen_run, folder / "trained")
    return folder


@pytest.mark.parametrize("command", COMMANDS)
def test_the_folder_above_a_run_names_the_run(command, holding_one, tmp_path, capsys):
    err = refusal(capsys, command, holding_one, tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: {holding_one} is not a run directory but holds one run: "
                   f"did you mean {holding_one / 'trained'}?\n")
    assert sorted(p.name for p in holding_one.iterdir()) == ["trained"]  # no plots/ beside it


def fake_runs(folder, names):
    """Folders that look like runs to the search (a last/ checkpoint folder each)."""
    for name in names:
        (folder / name / "last").mkdir(parents=True)
    return folder


def test_a_folder_of_a_few_runs_names_each(tmp_path, capsys):
    suite = fake_runs(tmp_path / "suite", ["soft/seed-1", "soft/seed-2", "hard/seed-1"])
    err = refusal(capsys, "evaluate", suite, tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: {suite} is not a run directory but holds 3 runs: did you "
                   f"mean {suite}/hard/seed-1, {suite}/soft/seed-1 or {suite}/soft/seed-2?\n")


def test_a_folder_of_many_runs_counts_them_and_names_three(tmp_path, capsys):
    suites = fake_runs(tmp_path / "cmp", [f"dates/m{m}/seed-{s}" for m in range(3)
                                          for s in range(1, 5)])
    err = refusal(capsys, "translate", suites, tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: {suites} is not a run directory but holds 12 runs, such as "
                   f"{suites}/dates/m0/seed-1, {suites}/dates/m0/seed-2, "
                   f"{suites}/dates/m0/seed-3: pass one of them\n")


def test_a_file_or_a_checkpoint_folder_is_named_as_such(deen_run, tmp_path, capsys):
    err = refusal(capsys, "plot", deen_run / "config.json", tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: {deen_run / 'config.json'} is a file, not a run directory; "
                   f"pass a folder that attnlab train or attnlab export wrote\n")
    err = refusal(capsys, "report", deen_run / "last", tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: {deen_run / 'last'} is the last/ checkpoint of a run, not a "
                   f"run directory: did you mean {deen_run}?\n")


def test_an_empty_folder_is_named_as_such(tmp_path, capsys):
    (tmp_path / "new").mkdir()
    err = refusal(capsys, "translate", tmp_path / "new", tmp_path / "missing" / "out")
    assert err == (f"attnlab: error: run directory {tmp_path / 'new'} is empty: it has no "
                   f"checkpoint (best/ or last/) yet; train a run into it, or pass a folder that "
                   f"attnlab train or attnlab export wrote\n")
