"""compare keeps its promise: a run of another config is refused, finished or not, for every
random seed, before anything trains, unless --retrain asks for it to be replaced; a run that
another process trains is refused at once naming that process (or waited for with --wait), and a
killed process leaves no lock behind; all the data of every member is checked before the first
trains, and every shipped suite names the command that makes its data."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
import yaml

from attnlab.cli import build_parser, main
from attnlab.compare import RunOptions, load_suite, shipped_suites
from attnlab.compare.run.checks import check_retrain, check_suite
from attnlab.compare.run.jobs import child_command
from attnlab.compare.run.layout import Job
from attnlab.compare.run.lock import run_lock
from attnlab.errors import UserError

from .test_compare import attnlab, checkpoint_step, suite_file


def edit_member(path, name, **overrides):
    """Change member `name`'s own overrides in the suite file at `path`."""
    suite = yaml.safe_load(path.read_text())
    member = next(member for member in suite["members"] if member["name"] == name)
    member["set"].update(overrides)
    path.write_text(yaml.safe_dump(suite))


def contents(folder):
    """Every file under `folder` with its modification time."""
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.mark.slow
def test_a_finished_member_with_another_config_is_refused_before_anything_trains(
        tmp_path, dates_dir, capsys):
    out, suite = tmp_path / "out", suite_file(tmp_path, dates_dir, steps=(10, 10))
    assert main(["compare", str(suite), "--dir", str(out), "--only", "bahdanau",
                 "--seeds", "2", "--quiet"]) == 0
    before = contents(out)
    edit_member(suite, "bahdanau", **{"train.max_steps": 12})
    capsys.readouterr()
    assert main(["compare", str(suite), "--dir", str(out), "--seeds", "2", "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    run = out / "bahdanau" / "seed-1"
    assert error == (f"attnlab: error: member bahdanau seed 1 ({run}) holds a run with another "
                     f"config (train.max_steps: 10 there, 12 now); pass --retrain bahdanau to "
                     f"replace its runs, or use another --dir")
    assert contents(out) == before   # the first member, plain, was not trained either
    assert not (out / "plain").exists()


@pytest.mark.slow
def test_a_run_an_older_attnlab_wrote_with_a_null_device_is_refused_and_kept(
        tmp_path, dates_dir, capsys):
    # train.device None was what "auto" is now; before the first release an older run is not
    # upgraded but refused in one sentence, and nothing of it is touched
    out, suite = tmp_path / "out", suite_file(tmp_path, dates_dir, steps=(10, 10))
    edit_member(suite, "bahdanau", **{"train.device": "auto"})   # the default of today
    assert main(["compare", str(suite), "--dir", str(out), "--only", "bahdanau",
                 "--quiet"]) == 0
    stored = out / "bahdanau" / "seed-1" / "config.json"
    config = json.loads(stored.read_text())
    config["train"]["device"] = None
    stored.write_text(json.dumps(config))
    weights = out / "bahdanau" / "seed-1" / "last"
    before = {p: p.stat().st_mtime_ns for p in weights.rglob("*")}
    capsys.readouterr()
    assert main(["compare", str(suite), "--dir", str(out), "--only", "bahdanau",
                 "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "train.device to null" in error, error
    assert "train it again" in error
    assert {p: p.stat().st_mtime_ns for p in weights.rglob("*")} == before   # not retrained


@pytest.mark.slow
def test_every_random_seed_of_a_member_is_compared(tmp_path, dates_dir, capsys):
    out, suite = tmp_path / "out", suite_file(tmp_path, dates_dir, steps=(10, 10))
    assert main(["compare", str(suite), "--dir", str(out), "--only", "plain", "--seeds", "2",
                 "--quiet"]) == 0
    stored = out / "plain" / "seed-2" / "config.json"
    config = json.loads(stored.read_text())
    config["model"]["decoder"]["hidden_dim"] = 20    # as if trained by another suite
    stored.write_text(json.dumps(config))
    capsys.readouterr()
    assert main(["compare", str(suite), "--dir", str(out), "--seeds", "2", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "member plain seed 2" in error and "model.decoder.hidden_dim: 20 there, 16 now" in error


@pytest.mark.slow
def test_retrain_replaces_every_run_of_that_member_and_only_when_asked(tmp_path, dates_dir,
                                                                      capsys):
    out, suite = tmp_path / "out", suite_file(tmp_path, dates_dir, steps=(10, 10))
    assert main(["compare", str(suite), "--dir", str(out), "--seeds", "2", "--quiet"]) == 0
    plain = (out / "plain" / "seed-1" / "compare.json").stat().st_mtime_ns
    edit_member(suite, "bahdanau", **{"train.max_steps": 12})
    capsys.readouterr()
    assert main(["compare", str(suite), "--dir", str(out), "--seeds", "2", "--retrain",
                 "bahdanau", "--quiet"]) == 0
    output = capsys.readouterr().out
    for seed in (1, 2):
        run = out / "bahdanau" / f"seed-{seed}"
        assert f"bahdanau seed {seed}: retraining {run}" in output
        assert json.loads((run / "compare.json").read_text())["updates"] == 12
        assert json.loads((run / "config.json").read_text())["train"]["max_steps"] == 12
    assert "plain seed 1: finished, kept" in output
    assert (out / "plain" / "seed-1" / "compare.json").stat().st_mtime_ns == plain
    # Asked once: the next call keeps the new runs.
    assert main(["compare", str(suite), "--dir", str(out), "--seeds", "2", "--quiet"]) == 0
    assert "bahdanau seed 2: finished, kept" in capsys.readouterr().out


def test_retrain_names_a_member_this_call_trains(tmp_path, dates_dir, capsys):
    suite = str(suite_file(tmp_path, dates_dir))
    out = str(tmp_path / "out")
    assert main(["compare", suite, "--dir", out, "--retrain", "bahdanu"]) == 2
    assert "did you mean 'bahdanau'?" in capsys.readouterr().err
    assert main(["compare", suite, "--dir", out, "--only", "plain", "--retrain",
                 "bahdanau"]) == 2
    assert ("--retrain bahdanau: this call trains only plain; add --only bahdanau or leave "
            "out --only") in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--report trains nothing"):
        main(["compare", suite, "--dir", out, "--report", "--retrain", "plain"])
    assert not (tmp_path / "out").exists()


def test_a_member_timed_by_a_retrained_one_is_retrained_with_it(tmp_path):
    suite = load_suite("lstmn")
    lstmn, lstm, equal_time = suite.members
    (tmp_path / "lstm-equal-time" / "seed-1").mkdir(parents=True)
    (tmp_path / "lstm-equal-time" / "seed-1" / "compare.json").write_text("{}")
    with pytest.raises(UserError, match="member lstm-equal-time trains for as long as lstmn "
                                        "did, so retraining lstmn changes its budget: pass "
                                        "--retrain lstm-equal-time too"):
        check_retrain(suite, suite.members, tmp_path, RunOptions(retrain=frozenset({"lstmn"})),
                      [1])
    check_retrain(suite, suite.members, tmp_path,
                  RunOptions(retrain=frozenset({"lstmn", "lstm-equal-time"})), [1])
    command = child_command(suite, tmp_path, RunOptions(retrain=frozenset({"lstmn"}), wait=True),
                            Job(lstmn, 1))
    assert command[-3:] == ["--retrain", "lstmn", "--wait"]
    assert "--retrain" not in child_command(suite, tmp_path, RunOptions(), Job(lstm, 1))


HOLD = """\
import sys, time
from pathlib import Path
from attnlab.compare.run.lock import run_lock
with run_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold_lock(run_dir, seconds):
    """Another process holding `run_dir`'s lock for `seconds` once it prints "held"."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir), str(seconds)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


@pytest.mark.slow
def test_a_second_process_on_a_run_refuses_at_once_naming_the_first(tmp_path, dates_dir,
                                                                     capsys):
    out = tmp_path / "out"
    suite = str(suite_file(tmp_path, dates_dir, steps=(10, 400)))
    first = attnlab("compare", suite, "--dir", str(out), "--only", "bahdanau")
    run = out / "bahdanau" / "seed-1"
    deadline = time.time() + 240
    while checkpoint_step(run) < 5 and first.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    if first.poll() is not None:
        pytest.fail(f"the first process ended too soon: {first.stdout.read()!r}")
    try:
        started = time.monotonic()
        assert main(["compare", suite, "--dir", str(out), "--only", "bahdanau"]) == 2
        assert time.monotonic() - started < 30
        assert capsys.readouterr().err.strip() == (
            f"attnlab: error: {run} is being trained by process {first.pid}; let it finish, or "
            f"pass --wait to start once it has")
        assert first.poll() is None and not (run / "compare.json").exists()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    # The kernel released the killed process's lock: the run can be taken at once.
    with run_lock(run):
        assert (run / "compare.lock").read_text().strip() == str(os.getpid())


@pytest.mark.slow
def test_wait_waits_for_the_other_process_then_trains(tmp_path, dates_dir, capsys):
    out = tmp_path / "out"
    suite = str(suite_file(tmp_path, dates_dir, steps=(10, 10)))
    run = out / "plain" / "seed-1"
    holder = hold_lock(run, 3)
    started = time.monotonic()
    assert main(["compare", suite, "--dir", str(out), "--only", "plain", "--wait",
                 "--quiet"]) == 0
    assert time.monotonic() - started > 2
    output = capsys.readouterr().out
    assert f"{run} is being trained by process {holder.pid}: waiting for it to finish" in output
    assert holder.wait(timeout=10) == 0
    assert json.loads((run / "compare.json").read_text())["updates"] == 10


@pytest.mark.slow
def test_a_jobs_child_on_a_run_another_command_holds_refuses_naming_it(tmp_path, dates_dir,
                                                                        capsys):
    out = tmp_path / "out"
    suite = str(suite_file(tmp_path, dates_dir, steps=(10, 10)))
    run = out / "plain" / "seed-1"
    holder = hold_lock(run, 120)
    try:
        assert main(["compare", suite, "--dir", str(out), "--jobs", "2", "--quiet"]) == 2
        error = capsys.readouterr().err
        assert (f"1 run(s) failed: plain seed 1 (exit 2: {run} is being trained by process "
                f"{holder.pid}; let it finish") in error
        assert not (run / "config.json").exists()   # the held run: untouched
        assert (out / "bahdanau" / "seed-1" / "compare.json").is_file()   # its own: trained
    finally:
        holder.kill()
        holder.wait()


def test_missing_data_of_a_later_member_is_refused_before_the_first_trains(tmp_path,
                                                                          dates_dir, capsys):
    suite, missing = suite_file(tmp_path, dates_dir), tmp_path / "elsewhere"
    edit_member(suite, "bahdanau", **{"data.dir": str(missing)})
    out = tmp_path / "out"
    assert main(["compare", str(suite), "--dir", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"attnlab: error: member bahdanau reads its data from {missing} (data.dir, from member "
        f"bahdanau's set), which does not exist; make it first (attnlab data --help lists the "
        f"commands that do)")
    assert not out.exists()


MAKE_DATA = {
    "bottleneck": "attnlab data multi30k-long --from data/multi30k --dest data/multi30k-long",
    "captioning": "attnlab data shapes --dest data/shapes",
    "dates": "attnlab data dates --dest data/dates-1950-2049 --years 1950-2049 --not-dates 0",
    "directions": "attnlab data multi30k --dest data/multi30k",
    "eras": "attnlab data dates --dest data/dates",
    "eras-multi30k": "attnlab data multi30k --dest data/multi30k",
    "lstmn": "attnlab data multi30k --dest data/multi30k",
    "lstmn-converge": "attnlab data multi30k --dest data/multi30k",
    "mechanisms": "attnlab data multi30k --dest data/multi30k",
    "news-alignment": "attnlab data wmt-news --dest data/wmt-news-deen && attnlab align --src "
                      "data/wmt-news-deen/train.de.gz --tgt data/wmt-news-deen/train.en.gz "
                      "--output data/wmt-news-deen/train.de-en.links",
    "value-norms": "attnlab data multi30k --dest data/multi30k",
}


def test_every_shipped_suite_is_listed_here():
    assert sorted(shipped_suites()) == sorted(MAKE_DATA)


@pytest.mark.parametrize("name", sorted(MAKE_DATA))
def test_missing_data_names_the_command_that_makes_it(name, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = load_suite(name).data
    assert main(["compare", name, "--dir", str(tmp_path / "out"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"attnlab: error: the data folder {folder} of suite {name!r} does not exist; make it "
        f"with: {MAKE_DATA[name]} (or give --data DIR)")
    assert not (tmp_path / "out").exists()
    commands = [shlex.split(part) for part in MAKE_DATA[name].split(" && ")]
    parsed = [build_parser().parse_args(command[1:]) for command in commands]  # real commands
    assert parsed[0].dest == folder


def test_a_links_file_named_in_set_follows_the_data_folder_and_is_checked_first(tmp_path):
    suite = load_suite("news-alignment")
    guided = suite.member("luong-general-guided")
    folder = tmp_path / "news"
    overrides = suite.overrides_for(guided, str(folder))
    assert (f'train.guided_alignment={{"links": "{folder}/train.de-en.links", "weight": 1.0, '
            f'"cost": "ce"}}') in overrides
    folder.mkdir()
    with pytest.raises(UserError, match=(
            rf"member luong-general-guided reads {folder}/train.de-en.links "
            r"\(train.guided_alignment.links\), which does not exist; make it with: attnlab "
            r"data wmt-news .* && attnlab align ")):
        check_suite(suite, suite.members, tmp_path / "out", RunOptions(data=str(folder)))
    assert not (tmp_path / "out").exists()


def test_a_missing_data_file_inside_the_suites_folder_names_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "shapes").mkdir(parents=True)   # made half-way: no JSON, no images
    suite = load_suite("captioning")
    with pytest.raises(UserError, match=r"member soft reads its data from "
                                        r"data/shapes/dataset_shapes.json \(data.json, from the "
                                        r"suite's data folder\), which does not exist; make it "
                                        r"with: attnlab data shapes --dest data/shapes"):
        check_suite(suite, suite.members, tmp_path / "out", RunOptions())
