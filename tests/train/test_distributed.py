"""Data-parallel training: two gloo processes, launched as torchrun would, meeting through a
file store (no port another process can take) and failing within a bounded time, never hanging."""

import time
from dataclasses import replace

import pytest
import torch
import torch.multiprocessing as mp
from toy_task import ToyTask, ddp_worker, parameters

from attnlab.train import RunDir, TrainConfig, train

pytestmark = pytest.mark.slow  # each test launches training processes

COLLECTIVE_TIMEOUT_S = 60  # a rank waiting longer in a collective raises
FINISH_TIMEOUT_S = 300     # the whole launch, then the ranks are killed and the test fails


def join_or_kill(context: mp.ProcessContext, seconds: float) -> None:
    """Wait for every rank (a failed one raises, as mp.spawn does); after `seconds`, kill the
    ones still running and fail the test."""
    deadline = time.monotonic() + seconds
    while not context.join(timeout=max(deadline - time.monotonic(), 0.0)):
        if time.monotonic() >= deadline:
            for process in context.processes:
                process.kill()
                process.join()
            pytest.fail(f"the ranks did not finish within {seconds} s; killed them")


def test_two_ranks_agree_checkpoint_and_resume_exactly(tmp_path):
    # 12 batches per epoch, so 6 steps per rank: 8 steps cross an epoch boundary.
    config = TrainConfig(max_steps=8, max_epochs=None, validate_every=4, checkpoint_every=3,
                         log_every=2, tensorboard=False, lr=1e-2, device="cpu")
    args = (2, str(tmp_path / "rendezvous"), str(tmp_path), config, COLLECTIVE_TIMEOUT_S)
    join_or_kill(mp.spawn(ddp_worker, args=args, nprocs=2, join=False), FINISH_TIMEOUT_S)
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

    # Resumed in one process: the data continues where the two ranks left it (16 batches drawn
    # of 12 an epoch), one batch a step; not exactly as two ranks would go on (the RNGs are
    # seeded afresh), but neither refused nor a batch seen twice.
    task = ToyTask()
    result = train(task, replace(config, max_steps=10), RunDir(tmp_path / "split"), resume=True,
                   progress=False)
    assert (result.steps, result.epochs) == (10, 1)
    state = RunDir(tmp_path / "split").load_checkpoint("last", task.model).training_state
    assert state is not None
    assert (state["sampler"]["epoch"], state["sampler"]["batches_done"]) == (1, 4 + 2)


def test_a_rank_that_never_comes_fails_the_launch_in_bounded_time(tmp_path):
    # World size 2, one process: the rendezvous waits for a rank that never joins.
    config = TrainConfig(max_steps=1, max_epochs=None, tensorboard=False, device="cpu")
    args = (2, str(tmp_path / "rendezvous"), str(tmp_path), config, 2)
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException, match="(?i)timeout|timed out"):
        join_or_kill(mp.spawn(ddp_worker, args=args, nprocs=1, join=False), FINISH_TIMEOUT_S)
    assert time.monotonic() - start < 60


def sleeper(rank: int, seconds: float) -> None:
    time.sleep(seconds)


def test_ranks_still_running_at_the_deadline_are_killed_and_the_test_fails():
    context = mp.spawn(sleeper, args=(120,), nprocs=2, join=False)
    start = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="did not finish within 1 s; killed them"):
        join_or_kill(context, 1)
    assert time.monotonic() - start < 30
    assert not any(process.is_alive() for process in context.processes)
