"""train.keep_checkpoints keeps the newest N step checkpoints (atomic, pruned, replaced with the
run); their average is the element-wise mean, tied weights included, written as a loadable run."""

import pytest
import torch
from toy_task import ToyModel, ToyTask

from attnlab.errors import CheckpointError, WriteError
from attnlab.train import RunDir, TrainConfig, train
from attnlab.train.averaging import average, average_weights, kept_steps, step_checkpoints


def trained(tmp_path, keep=3, **changes):
    config = TrainConfig(**{**dict(max_steps=20, max_epochs=None, validate_every=None,
                                   checkpoint_every=4, log_every=4, tensorboard=False, lr=5e-2,
                                   device="cpu", keep_checkpoints=keep), **changes})
    run = RunDir(tmp_path / "run")
    task = ToyTask()
    train(task, config, run, progress=False)
    run.write_config({"note": "a toy run"})
    return run, task


def test_the_newest_checkpoints_are_kept_and_the_older_pruned(tmp_path):
    run, _ = trained(tmp_path)
    assert [step for step, _ in kept_steps(run)] == [12, 16, 20]
    assert sorted(p.name for p in (run.path / "checkpoints").iterdir()) == [
        "step-00000012", "step-00000016", "step-00000020"]
    newest = step_checkpoints(run).read_weights("step-00000020")
    last = run.read_weights("last")
    assert newest.tensors.keys() == last.tensors.keys()
    for key, value in last.tensors.items():
        assert torch.equal(newest.tensors[key], value)
    assert not (run.path / "checkpoints" / "step-00000020" / "training_state.pt").exists()


def test_without_keep_checkpoints_there_are_none(tmp_path):
    run, _ = trained(tmp_path, keep=None)
    assert not (run.path / "checkpoints").exists() and kept_steps(run) == []
    with pytest.raises(CheckpointError, match="keeps no step checkpoints .*keep_checkpoints"):
        average(run.path, tmp_path / "average")


def test_averaged_weights_are_the_element_wise_mean(tmp_path):
    run, task = trained(tmp_path)
    steps = [step_checkpoints(run).read_weights(folder.name) for _, folder in kept_steps(run)]
    done = average(run.path, tmp_path / "average", last=2)
    assert done.steps == [16, 20]
    result = RunDir(done.output).read_weights("last")
    assert result.tied == steps[-1].tied and result.tied  # the tied output layer, once
    for key, value in result.tensors.items():
        expected = (steps[1].tensors[key].double() + steps[2].tensors[key].double()) / 2
        torch.testing.assert_close(value, expected.to(value.dtype), rtol=0, atol=1e-7)
        assert not torch.equal(value, steps[2].tensors[key])
    # it loads into the model, tied weights refilled, with the run's config beside it
    model = ToyModel(task.vocab_size, task.dim, 0.0)
    checkpoint = RunDir(done.output).load_checkpoint("last", model, task.signature())
    assert checkpoint.meta["averaged"]["steps"] == [16, 20] and checkpoint.meta["step"] == 20
    assert model.out.weight is model.embedding.weight
    assert (done.output / "config.json").read_text() == run.file("config.json").read_text()
    everything = average_weights(steps)
    key = "hidden.weight"
    torch.testing.assert_close(everything.tensors[key],
                               sum(s.tensors[key] for s in steps) / 3, rtol=0, atol=1e-7)


def test_average_refuses_before_writing(tmp_path):
    run, _ = trained(tmp_path)
    with pytest.raises(CheckpointError, match="--last 5 asks for more checkpoints than the 3"):
        average(run.path, tmp_path / "average", last=5)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(WriteError, match="already exists"):
        average(run.path, tmp_path / "taken")
    assert not (tmp_path / "average").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "taken"]
