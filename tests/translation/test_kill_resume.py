"""A run killed with SIGKILL resumes from its last checkpoint and continues exactly: the
resumed run's losses equal an uninterrupted run's, step for step."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from attnlab.data import write_dates

pytestmark = pytest.mark.slow  # trains, is killed, resumes

STEPS = 60


def config(tmp_path, data_dir):
    cfg = {
        "data": {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
                 "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
                 "batch_size": 16, "valid_sentences": 8},
        "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.2},
                  "decoder": {"kind": "luong", "embedding_dim": 8, "hidden_dim": 16,
                              "dropout": 0.2, "attention": {"score": "general"}}},
        "train": {"lr": 0.01, "max_steps": STEPS, "max_epochs": None, "validate_every": None,
                  "checkpoint_every": 5, "log_every": 1, "threads": 1, "tensorboard": False},
        "decode": {"max_len_ratio": 0.0, "max_len_extra": 12},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def attnlab(*args):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "attnlab", *args, "--quiet"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def losses(run_dir):
    """step -> loss; the last record of a step wins (a resumed run logs after a killed one)."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in records if r["kind"] == "train"}


def checkpoint_step(run_dir):
    meta = run_dir / "last" / "meta.json"
    try:
        return json.loads(meta.read_text())["step"]
    except (OSError, ValueError, KeyError):
        return 0


def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path):
    data_dir = tmp_path / "dates"
    write_dates(data_dir, size=300, seed=5)
    cfg = config(tmp_path, data_dir)
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert attnlab("train", str(cfg), "--run", str(straight)).wait(timeout=300) == 0

    process = attnlab("train", str(cfg), "--run", str(killed))
    deadline = time.time() + 240
    while checkpoint_step(killed) < 10 and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    if process.poll() is not None:
        pytest.fail(f"the run ended before it could be killed: {process.stdout.read()!r}")
    process.send_signal(signal.SIGKILL)
    process.wait()
    resumed_from = checkpoint_step(killed)
    assert 10 <= resumed_from < STEPS

    resume = attnlab("train", "--run", str(killed), "--resume")
    output = resume.communicate(timeout=300)[0].decode()
    assert resume.returncode == 0, output
    assert f"at step {resumed_from}" in output

    expected, got = losses(straight), losses(killed)
    assert sorted(expected) == sorted(got) == list(range(1, STEPS + 1))
    for step in range(1, STEPS + 1):
        assert got[step] == pytest.approx(expected[step], rel=1e-6, abs=1e-7), step
