"""Two nodes on one host: two `torchrun --nnodes 2 --nproc_per_node 1 --rdzv_backend c10d`
launches on 127.0.0.1 train a tiny translation model with `-m attnlab train` (CPU, gloo).

A run whose two launches are both killed with SIGKILL (as when the machines are lost) resumes
on two nodes and ends exactly as an uninterrupted run: every rank with the same weights, those
of the uninterrupted run, and the same loss at every step. Every launch has a deadline, after
which its agent and workers are killed and the test fails: nothing hangs.
"""

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import safetensors.torch
import torch
import yaml
from torch.distributed.run import get_args_parser

from attnlab.cli import build_parser
from attnlab.data import write_dates
from attnlab.train import RunDir

CHECKPOINT_EVERY = 2
MORE_STEPS = 8          # trained after the step the killed run was saved at
LAUNCH_TIMEOUT_S = 150  # one two-node launch, from start to end


def train_commands(parser: argparse.ArgumentParser, path=()):
    """(command words, parser) of every `... train` command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if name == "train":
                    yield (*path, name), sub
                yield from train_commands(sub, (*path, name))


def test_torchrun_hands_every_train_flag_to_attnlab_but_a_bare_run(capsys):
    # torchrun's parser takes an option it knows, or a prefix of one, as its own wherever it
    # stands: a bare --run is its --run-path, so `... train` also spells it --run-dir.
    torchrun = get_args_parser()
    head = ["--nnodes", "2", "--nproc_per_node", "1", "--rdzv_backend", "c10d",
            "--rdzv_endpoint", "host:29500", "-m", "attnlab"]
    commands = dict(train_commands(build_parser()))
    assert ("train",) in commands
    for words, parser in commands.items():
        flags = [option for action in parser._actions for option in action.option_strings
                 if option not in ("-h", "--help", "--run")]
        assert "--run-dir" in flags, words
        argv = [*words, "CONFIG", "--debug", *[part for flag in flags for part in (flag, "V")]]
        parsed = torchrun.parse_args([*head, *argv])
        assert (parsed.module, parsed.training_script, parsed.training_script_args) == (
            True, "attnlab", argv), words
    with pytest.raises(SystemExit):
        torchrun.parse_args([*head, "train", "CONFIG", "--run", "runs/x"])
    assert "ambiguous option: --run could match --run-path" in capsys.readouterr().err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (torchrun starts each worker in a session of its
    own, so the agent's process group does not hold them)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Node:
    """One torchrun agent (one "node") and its workers; their output goes to `log`."""

    def __init__(self, command: list[str], log: Path, env: dict[str, str]):
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            env=env, start_new_session=True)

    def kill(self) -> None:
        """SIGKILL the agent and its workers; nothing for an agent already ended (and reaped:
        its pid may belong to another process by now)."""
        if self.process.poll() is None:
            for pid in [self.process.pid, *descendants(self.process.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.process.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def launch(tmp_path: Path, name: str, module_args: list[str]) -> list[Node]:
    """`torchrun --nnodes 2 ... -m MODULE_ARGS` twice: two nodes meeting at a free port."""
    endpoint = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
               "--nproc_per_node", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", endpoint,
               "--rdzv_id", name, "-m", *module_args]
    env = {key: value for key, value in os.environ.items()
           if key not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")]))
    return [Node(command, tmp_path / f"{name}-node{n}.log", env) for n in range(2)]


@contextlib.contextmanager
def killed_at_exit(nodes: list[Node]):
    try:
        yield nodes
    finally:
        for node in nodes:
            node.kill()


def outputs(nodes: list[Node]) -> str:
    return "\n".join(f"--- {node.log.name}:\n{node.output()[-3000:]}" for node in nodes)


def wait(nodes: list[Node], deadline: float) -> None:
    """Every node ends with 0 by the deadline; otherwise all are killed and the test fails."""
    for node in nodes:
        try:
            node.process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            for other in nodes:
                other.kill()
            pytest.fail(f"the launch did not end within {LAUNCH_TIMEOUT_S} s; killed it\n"
                        + outputs(nodes))
    assert [node.process.returncode for node in nodes] == [0, 0], outputs(nodes)


def kill_after_a_checkpoint(nodes: list[Node], run_dir: Path) -> int:
    """SIGKILL both nodes once `last` holds a step; the step it holds then."""
    deadline = time.monotonic() + LAUNCH_TIMEOUT_S
    while (RunDir(run_dir).saved_step("last") or 0) < CHECKPOINT_EVERY:
        if any(node.process.poll() is not None for node in nodes):
            pytest.fail("a node ended before the run could be killed\n" + outputs(nodes))
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    for node in nodes:
        node.kill()
    step = RunDir(run_dir).saved_step("last")
    assert step is not None and step >= CHECKPOINT_EVERY, outputs(nodes)
    return step


def write_config(tmp_path: Path) -> Path:
    data_dir = tmp_path / "dates"
    write_dates(data_dir, size=200, seed=7)   # 160 training pairs: 10 steps an epoch
    config = {
        "data": {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
                 "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
                 "batch_size": 8, "valid_sentences": 8},
        "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.1},
                  "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16,
                              "dropout": 0.1, "attention": {"score": "additive"}}},
        # The killed run is killed long before this budget (which ends it should the test
        # die first); the others are given theirs with --set.
        "train": {"lr": 0.01, "max_steps": 1000, "max_epochs": None,
                  "validate_every": None, "checkpoint_every": CHECKPOINT_EVERY,
                  "log_every": 1, "threads": 1, "tensorboard": False},
        "decode": {"max_len_ratio": 0.0, "max_len_extra": 12},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def losses(run_dir: Path) -> dict[int, float]:
    """step -> loss; the last record of a step wins (a resumed run logs after a killed one)."""
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return {r["step"]: r["loss"] for r in records if r["kind"] == "train"}


def rank_weights(out: Path, steps: int) -> dict[str, torch.Tensor]:
    """The weights both ranks saved, once they are checked to be the same, at `steps`."""
    ranks = [torch.load(out / f"rank{r}.pt", weights_only=True) for r in range(2)]
    assert [(r["rank"], r["world_size"], r["steps"]) for r in ranks] == [(0, 2, steps),
                                                                           (1, 2, steps)]
    first, second = (rank["weights"] for rank in ranks)
    assert first.keys() == second.keys()
    for name, value in first.items():
        assert torch.equal(value, second[name]), name
    return first


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                    reason="finds torchrun's workers through /proc (Linux)")
def test_two_nodes_agree_and_a_killed_run_resumes_exactly(tmp_path):
    config = write_config(tmp_path)
    straight, killed, out = tmp_path / "straight", tmp_path / "killed", tmp_path / "weights"

    # The documented command itself, killed after a checkpoint.
    with killed_at_exit(launch(tmp_path, "killed", ["attnlab", "train", str(config),
                                                    "--run-dir", str(killed), "--quiet"])) as nodes:
        saved = kill_after_a_checkpoint(nodes, killed)
    assert [node.process.returncode for node in nodes] == [-signal.SIGKILL] * 2
    steps = saved + MORE_STEPS

    # Resumed on two nodes, beside an uninterrupted run of as many steps.
    budget = f"train.max_steps={steps}"
    uninterrupted = launch(tmp_path, "straight", [
        "multinode_worker", str(out / "straight"), "train", str(config), "--run-dir",
        str(straight), "--quiet", "--set", budget])
    resumed = launch(tmp_path, "resumed", [
        "multinode_worker", str(out / "resumed"), "train", "--run-dir", str(killed),
        "--resume", "--quiet", "--set", budget])
    with killed_at_exit(uninterrupted + resumed):
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        wait(uninterrupted, deadline)
        wait(resumed, deadline)
    assert f"resumed {killed} at step {saved}" in resumed[0].output()

    expected = rank_weights(out / "straight", steps)
    got = rank_weights(out / "resumed", steps)
    for run_dir in (straight, killed):   # rank 0 checkpointed what every rank holds
        checkpoint = safetensors.torch.load_file(run_dir / "last" / "model.safetensors")
        for name, value in checkpoint.items():
            assert torch.equal(value, expected[name]), name
    assert RunDir(killed).saved_step("last") == steps
    for name, value in expected.items():
        assert torch.equal(value, got[name]), name
    assert losses(killed) == losses(straight)
    assert sorted(losses(straight)) == list(range(1, steps + 1))
