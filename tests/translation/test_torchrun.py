"""`torchrun --nproc_per_node 2` trains a tiny translation model on CPU (gloo); both ranks end
with identical weights, equal to what rank 0 checkpointed; a refused run stops every rank."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import safetensors.torch
import torch
import yaml

from attnlab.data import write_dates

pytestmark = pytest.mark.slow  # trains under torchrun


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(config_path, run_dir, out_prefix) -> subprocess.CompletedProcess:
    """torchrun_worker.py on 2 ranks (CPU, gloo)."""
    worker = Path(__file__).with_name("torchrun_worker.py")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
               "--master_addr", "127.0.0.1", "--master_port", str(free_port()), str(worker),
               str(config_path), str(run_dir), str(out_prefix)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def snapshot(directory) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file()}


def test_two_ranks_end_with_identical_weights(tmp_path):
    data_dir = tmp_path / "dates"
    write_dates(data_dir, size=200, seed=7)
    config = {
        "data": {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
                 "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
                 "batch_size": 8, "valid_sentences": 8},
        "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.1},
                  "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16,
                              "dropout": 0.1, "attention": {"score": "additive"}}},
        "train": {"lr": 0.01, "max_steps": 6, "max_epochs": None, "validate_every": 3,
                  "checkpoint_every": 3, "log_every": 1, "threads": 1, "tensorboard": False},
        "decode": {"max_len_ratio": 0.0, "max_len_extra": 12},
    }
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    done = torchrun(config_path, tmp_path / "run", tmp_path / "rank")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    assert [(r["rank"], r["world"], r["steps"]) for r in ranks] == [(0, 2, 6), (1, 2, 6)]
    saved = safetensors.torch.load_file(tmp_path / "run" / "last" / "model.safetensors")
    for name, value in ranks[0]["weights"].items():
        assert torch.equal(value, ranks[1]["weights"][name]), name
        if name in saved:
            assert torch.equal(value, saved[name]), name
    # Trained again without --resume or --overwrite: rank 0 refuses, rank 1 stops with it
    # (no rank waits forever: torchrun returns), and the run is untouched. Whether rank 1 prints
    # its own "rank 0 stopped" before torchrun stops it is a race, so it is not asserted.
    before = snapshot(tmp_path / "run")
    again = torchrun(config_path, tmp_path / "run", tmp_path / "again")
    assert again.returncode != 0
    output = again.stdout + again.stderr
    assert f"{tmp_path / 'run'} already holds a trained run with" in output
    assert snapshot(tmp_path / "run") == before
