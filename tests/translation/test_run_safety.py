"""A run directory is never damaged by a command that fails or is misused: training into a
trained run needs --resume or --overwrite, every check runs before anything is written, and a
refusal or a failed write is one sentence that leaves every file byte for byte as it was."""

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

from attnlab.cli import main
from attnlab.data import write_dates
from attnlab.train import RunDir, checkpoint
from attnlab.train.identity import sha256_of
from attnlab.train.monitor import Monitor

from .test_training import CONFIG as TRAINING

# test_training's tiny model, trained 4 steps with a best/ chosen by the loss.
CONFIG = {**TRAINING, "train": {**TRAINING["train"], "max_steps": 4, "validate_every": 2,
                                "checkpoint_every": 2,
                                "early_stopping": {"metric": "loss", "mode": "min"}}}


@pytest.fixture(scope="module")
def dates_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    write_dates(directory, size=200, seed=3)
    return directory


@pytest.fixture(scope="module")
def config_path(dates_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("config") / "tiny.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, "data": {**CONFIG["data"], "dir": str(dates_dir)}}))
    return path


@pytest.fixture(scope="module")
def trained(config_path, tmp_path_factory):
    """A run trained for 4 steps (best/ and last/), to be copied by each test."""
    run = tmp_path_factory.mktemp("trained") / "run"
    assert attnlab("train", config_path, "--run", run) == 0
    return run


@pytest.fixture
def run(trained, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(trained, copy)
    return copy


def attnlab(*args) -> int:
    return main([str(a) for a in args] + ["--quiet"])


def snapshot(directory) -> dict[str, str]:
    """Every file and folder below `directory`: its sha256, or "folder"."""
    return {str(p.relative_to(directory)): "folder" if p.is_dir()
            else hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.rglob("*"))}


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.removeprefix("attnlab: error: ").rstrip("\n")


@pytest.mark.slow
def test_training_into_a_trained_run_needs_resume_or_overwrite(config_path, run, capsys):
    before = snapshot(run)
    capsys.readouterr()
    assert attnlab("train", config_path, "--run", run) == 2
    assert error_line(capsys) == (f"{run} already holds a trained run with best/ (step 4), "
                                  f"last/ (step 4): pass --resume to continue it or "
                                  f"--overwrite to replace it")
    assert snapshot(run) == before


@pytest.mark.slow
def test_overwrite_replaces_the_old_run_and_says_what(config_path, run, capsys):
    (run / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert attnlab("train", config_path, "--run", run, "--overwrite",
                   "--set", "model.decoder.hidden_dim=24", "--set", "train.max_steps=2") == 0
    out = capsys.readouterr().out
    assert (f"replacing {run}: best/ (step 4), last/ (step 4), config.json, src_vocab.json, "
            f"tgt_vocab.json, metrics.jsonl, tensorboard/ (keeping notes.txt)") in out
    assert (run / "notes.txt").read_text() == "mine"
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert max(r["step"] for r in records) == 2   # the old run's steps 3 and 4 are gone
    meta = RunDir(run).read_meta("last")
    assert meta["step"] == 2 and meta["signature"]["model"]["decoder"]["hidden_dim"] == 24
    assert json.loads((run / "config.json").read_text())["model"]["decoder"]["hidden_dim"] == 24


@pytest.mark.slow
def test_overwrite_refused_by_a_check_removes_nothing(config_path, run, tmp_path, capsys):
    before = snapshot(run)
    capsys.readouterr()
    assert attnlab("train", config_path, "--run", run, "--overwrite",
                   "--set", f"data.dir={tmp_path / 'nowhere'}") == 2
    assert error_line(capsys).startswith(f"data file not found: {tmp_path / 'nowhere'}")
    assert snapshot(run) == before


@pytest.mark.slow
def test_a_refused_resume_leaves_the_run_unchanged(config_path, run, capsys):
    before = snapshot(run)
    capsys.readouterr()
    assert attnlab("train", config_path, "--run", run, "--resume",
                   "--set", "model.decoder.hidden_dim=24") == 2
    assert error_line(capsys) == (f"checkpoint {run / 'last'} was written for a different "
                                  f"model: signature.model.decoder.hidden_dim is 16 there but "
                                  f"24 in this config")
    assert snapshot(run) == before
    # config.json was not replaced by the refused config: the run resumes from its own.
    assert attnlab("train", "--run", run, "--resume", "--set", "train.max_steps=6") == 0
    assert RunDir(run).read_meta("last")["step"] == 6


def test_resume_of_a_run_that_is_not_there(config_path, tmp_path, capsys):
    assert attnlab("train", config_path, "--run", tmp_path / "nope", "--resume") == 2
    assert error_line(capsys) == f"cannot resume {tmp_path / 'nope'}: it does not exist"
    assert not (tmp_path / "nope").exists()


def test_a_run_path_below_a_file(config_path, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert attnlab("train", config_path, "--run", tmp_path / "file" / "run") == 2
    assert error_line(capsys) == (f"cannot write the run directory {tmp_path / 'file' / 'run'}:"
                                  f" {tmp_path / 'file'} is a file, not a folder")


@pytest.fixture(scope="module")
def other_sizes(config_path, tmp_path_factory):
    """Runs of the same task with a smaller and a bigger decoder, trained as long."""
    runs = {}
    for name, hidden in (("smaller", 12), ("bigger", 24)):
        runs[name] = tmp_path_factory.mktemp(name) / "run"
        assert attnlab("train", config_path, "--run", runs[name],
                       "--set", f"model.decoder.hidden_dim={hidden}") == 0
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("size", ["smaller", "bigger"])
@pytest.mark.parametrize("hashes", [True, False])
def test_a_training_state_of_another_run_is_one_sentence(run, other_sizes, size, hashes):
    """In a fresh process: a state of smaller sizes used to crash fused Adam (SIGSEGV)."""
    state = run / "last" / "training_state.pt"
    shutil.copyfile(other_sizes[size] / "last" / "training_state.pt", state)
    if not hashes:   # meta.json rewritten to match: the state itself is checked
        meta = json.loads((run / "last" / "meta.json").read_text())
        meta["files"]["training_state.pt"]["sha256"] = sha256_of(state)
        (run / "last" / "meta.json").write_text(json.dumps(meta))
    before = snapshot(run)
    done = subprocess.run([sys.executable, "-m", "attnlab", "train", "--run", str(run),
                           "--resume", "--quiet"], capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    shape = {"smaller": 36, "bigger": 72}[size]
    expected = (f"{state} is not the file checkpoint {run / 'last'} saved (step 4): its content "
                f"differs from what meta.json records (damaged, or copied from another run)"
                if hashes else
                f"{state} holds optimizer exp_avg of 'decoder.rnn.weight_ih_l0' of shape "
                f"[{shape}, 24] but the parameter's is [48, 24]: it was saved for another model")
    assert done.stderr == f"attnlab: error: {expected}\n"
    assert snapshot(run) == before


@pytest.mark.slow
def test_a_full_disk_while_checkpointing_keeps_the_last_checkpoint(config_path, tmp_path,
                                                                   monkeypatch, capsys):
    write, run = checkpoint._write_file, tmp_path / "run"

    def full_after_step_two(path, data):
        if path.name == "training_state.pt" and RunDir(run).has_checkpoint("last"):
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, data)

    monkeypatch.setattr(checkpoint, "_write_file", full_after_step_two)
    assert attnlab("train", config_path, "--run", run) == 2
    assert error_line(capsys) == (f"cannot write {run / 'last'}: no space left on the device; "
                                  f"free some space or write elsewhere (the previous last/, "
                                  f"step 2, is kept)")
    assert not (run / "last.tmp").exists()
    monkeypatch.undo()
    assert RunDir(run).read_meta("last")["step"] == 2
    assert attnlab("train", "--run", run, "--resume") == 0   # the kept checkpoint resumes
    assert RunDir(run).read_meta("last")["step"] == 4


@pytest.mark.slow
def test_a_read_only_run_directory_is_one_sentence(config_path, run, monkeypatch, capsys):
    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    before = snapshot(run)
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    capsys.readouterr()
    assert attnlab("train", "--run", run, "--resume", "--set", "train.max_steps=6") == 2
    assert error_line(capsys) == (f"cannot write {run / 'config.json'}: the file system is "
                                  f"read-only; write elsewhere")
    assert snapshot(run) == before


@pytest.mark.slow
def test_metrics_that_cannot_be_written_are_one_sentence(config_path, run, capsys):
    (run / "metrics.jsonl").unlink()
    (run / "metrics.jsonl").mkdir()
    capsys.readouterr()
    assert attnlab("train", "--run", run, "--resume", "--set", "train.max_steps=6") == 2
    assert error_line(capsys) == (f"cannot write {run / 'metrics.jsonl'}: it is a folder, not "
                                  f"a file")
    assert RunDir(run).read_meta("last")["step"] == 4


@pytest.mark.slow
def test_a_full_disk_while_logging_is_one_sentence(config_path, tmp_path, monkeypatch, capsys):
    def full_disk(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Monitor, "_record", full_disk)
    run = tmp_path / "run"
    assert attnlab("train", config_path, "--run", run) == 2
    assert error_line(capsys) == (f"cannot write {run}: no space left on the device; free some "
                                  f"space or write elsewhere")


@pytest.mark.slow
def test_a_run_that_saved_no_checkpoint_is_replaced(config_path, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "metrics.jsonl").write_text('{"kind": "train", "step": 99, "loss": 1.0}\n')
    assert attnlab("train", config_path, "--run", run, "--set", "train.max_steps=2") == 0
    assert f"replacing {run}: config.json, metrics.jsonl\n" in capsys.readouterr().out
    steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert max(steps) == 2


def test_resume_without_a_config_of_a_run_that_is_not_there(tmp_path, capsys):
    assert attnlab("train", "--run", tmp_path / "nope", "--resume") == 2
    assert error_line(capsys) == f"cannot resume {tmp_path / 'nope'}: it does not exist"
