"""The training loop on a toy task: budgets, early stopping, exact resume, TensorBoard."""

import io
import sys

import pytest
import torch
from toy_task import ToyTask, parameters

from attnlab.errors import CheckpointError, ConfigError
from attnlab.train import EarlyStoppingConfig, RunDir, TrainConfig, train

# 48 examples in batches of 4: 12 steps per epoch.


def config(**changes) -> TrainConfig:
    base = dict(max_steps=30, max_epochs=None, validate_every=7, checkpoint_every=5,
                log_every=4, tensorboard=False, lr=1e-2, device="cpu")
    return TrainConfig(**{**base, **changes})


def assert_identical(first: dict, second: dict) -> None:
    assert first.keys() == second.keys()
    for name in first:
        assert torch.equal(first[name], second[name]), name


@pytest.mark.parametrize("stop", ["interrupt", "max_steps"])
def test_stop_and_resume_equals_straight_run(tmp_path, stop):
    straight = ToyTask()
    result = train(straight, config(), RunDir(tmp_path / "straight"), progress=False)
    assert (result.steps, result.stopped_by) == (30, "max_steps")

    run_dir = RunDir(tmp_path / "split")
    if stop == "interrupt":  # SIGINT mid-epoch 2, during step 17: it finishes, then stops
        first = train(ToyTask(interrupt_at=17), config(), run_dir, progress=False)
        assert (first.steps, first.stopped_by) == (17, "interrupted")
    else:
        first = train(ToyTask(), config(max_steps=17), run_dir, progress=False)
        assert (first.steps, first.stopped_by) == (17, "max_steps")
    torch.manual_seed(123)   # a different global RNG state: resume must restore its own
    resumed = ToyTask()
    result = train(resumed, config(), run_dir, resume=True, progress=False)
    assert (result.steps, result.epochs, result.stopped_by) == (30, 2, "max_steps")
    assert_identical(parameters(resumed.model), parameters(straight.model))


def test_dropout_makes_the_rng_matter(tmp_path):
    """Guard for the test above: without the restored RNG state the parameters would differ."""
    first, second = ToyTask(), ToyTask()
    train(first, config(max_steps=3), RunDir(tmp_path / "a"), progress=False)
    train(second, config(max_steps=3, seed=2), RunDir(tmp_path / "b"), progress=False)
    assert not torch.equal(first.model.hidden.weight, second.model.hidden.weight)


def test_early_stopping_keeps_the_best_checkpoint(tmp_path):
    run_dir = RunDir(tmp_path)
    task = ToyTask(metrics=[1.0, 2.0, 2.0, 1.5, 3.0])
    stopping = EarlyStoppingConfig(metric="score", mode="max", patience=2)
    result = train(task, config(max_steps=100, validate_every=3, early_stopping=stopping),
                   run_dir, progress=False)
    assert (result.stopped_by, result.steps, result.best_metric) == ("early_stopping", 12, 2.0)
    assert result.last_metrics == {"score": 1.5}
    assert run_dir.read_meta("best")["step"] == 6
    assert run_dir.read_meta("last")["step"] == 12
    assert not run_dir.file("best/training_state.pt").exists()


def test_missing_early_stopping_metric_is_a_config_error(tmp_path):
    stopping = EarlyStoppingConfig(metric="bleu")
    with pytest.raises(ConfigError, match="'bleu'.*returned only loss"):
        train(ToyTask(), config(early_stopping=stopping), RunDir(tmp_path), progress=False)


def test_budgets(tmp_path):
    epochs = train(ToyTask(), config(max_steps=None, max_epochs=2), RunDir(tmp_path / "e"),
                   progress=False)
    assert (epochs.steps, epochs.epochs, epochs.stopped_by) == (24, 2, "max_epochs")
    timed = train(ToyTask(), config(max_steps=10_000, max_minutes=1e-5), RunDir(tmp_path / "t"),
                  progress=False)
    assert timed.stopped_by == "time" and 1 <= timed.steps < 10_000
    assert RunDir(tmp_path / "t").read_meta("last")["step"] == timed.steps


def test_resume_refuses_missing_or_foreign_checkpoints(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint .*last"):
        train(ToyTask(), config(), RunDir(tmp_path), resume=True, progress=False)
    train(ToyTask(), config(max_steps=2), RunDir(tmp_path), progress=False)
    with pytest.raises(CheckpointError, match=r"signature\.dim is 8 there but 6"):
        train(ToyTask(dim=6), config(), RunDir(tmp_path), resume=True, progress=False)


def test_tensorboard_gets_scalars_images_and_text(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = RunDir(tmp_path)
    train(ToyTask(images=True), config(max_steps=8, validate_every=4, log_every=2,
                                       tensorboard=True), run_dir, progress=False)
    events = EventAccumulator(str(run_dir.tensorboard_dir))
    events.Reload()
    tags = events.Tags()
    expected = {"train/loss", "train/lr", "train/tokens_per_second", "train/grad_norm",
                "valid/loss"}
    assert expected <= set(tags["scalars"])
    assert [event.step for event in events.Scalars("train/loss")] == [2, 4, 6, 8]
    assert [event.step for event in events.Scalars("valid/loss")] == [4, 8]
    assert "valid/pattern" in tags["images"]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    train(ToyTask(), config(max_steps=8, validate_every=4, log_every=2), RunDir(tmp_path))
    text = terminal.getvalue()
    assert "8/8" in text and "loss=" in text and "tok/s=" in text
    assert "step 4 validation: loss" in text and "stopped by max_steps at step 8" in text


def test_a_task_missing_members_is_refused(tmp_path):
    with pytest.raises(TypeError, match="object is not a Task: it lacks model, sampler"):
        train(object(), config(), RunDir(tmp_path))


def test_a_diverging_loss_stops_with_an_error(tmp_path):
    task = ToyTask()
    task.model.hidden.weight.data[0, 0] = float("nan")
    with pytest.raises(FloatingPointError, match=r"not finite at step 1 \(nothing saved\)"):
        train(task, config(), RunDir(tmp_path), progress=False)
