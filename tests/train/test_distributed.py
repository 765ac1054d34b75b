"""Data-parallel training: two gloo processes on loopback, launched as torchrun would."""

import socket

import torch
import torch.multiprocessing as mp
from toy_task import ToyTask, ddp_worker, parameters

from attnlab.train import RunDir, TrainConfig


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_ranks_agree_checkpoint_and_resume_exactly(tmp_path):
    # 12 batches per epoch, so 6 steps per rank: 8 steps cross an epoch boundary.
    config = TrainConfig(max_steps=8, max_epochs=None, validate_every=4, checkpoint_every=3,
                         log_every=2, tensorboard=False, lr=1e-2, device="cpu")
    mp.spawn(ddp_worker, args=(2, free_ports(3), str(tmp_path), config), nprocs=2)
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    for rank in ranks:
        assert [(rank[run]["steps"], rank[run]["stopped_by"]) for run in ("straight", "split")] \
            == [(8, "max_steps")] * 2
    saved = ToyTask()
    initial = parameters(saved.model)
    meta = RunDir(tmp_path / "straight").load_checkpoint("last", saved.model).meta
    assert meta["step"] == 8 and "loss" in meta["metrics"]
    straight = ranks[0]["straight"]["parameters"]
    assert not torch.equal(initial["hidden.weight"], straight["hidden.weight"])
    for name, value in straight.items():
        assert torch.equal(value, parameters(saved.model)[name]), name   # rank 0 saved it
        for rank in ranks:
            assert torch.equal(value, rank["straight"]["parameters"][name]), name
            assert torch.equal(value, rank["split"]["parameters"][name]), name
