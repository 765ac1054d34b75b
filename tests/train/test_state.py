"""The training state belongs to its weights: a state saved for another model, at another step
or garbled is one CheckpointError sentence naming the file, before the optimizer sees it."""

import json
import shutil
from pathlib import Path

import pytest
import torch
from toy_task import ToyTask

from attnlab.errors import CheckpointError
from attnlab.train import RunDir, TrainConfig, train
from attnlab.train.identity import sha256_of
from attnlab.train.state import check_optimizer_state

PATH = Path("runs/x/last/training_state.pt")


def config(**changes) -> TrainConfig:
    base = dict(max_steps=4, max_epochs=None, validate_every=None, checkpoint_every=2,
                log_every=2, tensorboard=False, lr=1e-2, device="cpu")
    return TrainConfig(**{**base, **changes})


def without_hashes(run: Path) -> None:
    """Make meta.json of `run/last` record the files as they are now, so the hashes cannot
    catch a swapped file (a state copied in with a meta.json rewritten to match)."""
    rehash(run / "last")


def rehash(checkpoint: Path) -> None:
    meta_path = checkpoint / "meta.json"
    meta = json.loads(meta_path.read_text())
    for name, entry in meta["files"].items():
        entry["sha256"] = sha256_of(checkpoint / name)
    meta_path.write_text(json.dumps(meta))


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("dim", [6, 12])
def test_an_optimizer_state_of_other_sizes_is_refused(tmp_path, dim):
    run, other = tmp_path / "run", tmp_path / "other"
    train(ToyTask(), config(), RunDir(run), progress=False)
    train(ToyTask(dim=dim), config(), RunDir(other), progress=False)
    shutil.copyfile(other / "last" / "training_state.pt", run / "last" / "training_state.pt")
    with pytest.raises(CheckpointError, match=r"training_state\.pt is not the file"):
        train(ToyTask(), config(max_steps=6), RunDir(run), resume=True, progress=False)
    without_hashes(run)   # no hash to catch it: the optimizer state itself is checked
    before = snapshot(run)
    with pytest.raises(CheckpointError) as error:
        train(ToyTask(), config(max_steps=6), RunDir(run), resume=True, progress=False)
    assert str(error.value) == (f"{run / 'last' / 'training_state.pt'} holds optimizer exp_avg "
                                f"of 'embedding.weight' of shape [11, {dim}] but the "
                                f"parameter's is [11, 8]: it was saved for another model")
    assert snapshot(run) == before


def test_a_training_state_of_another_step_is_refused(tmp_path):
    run = tmp_path / "run"
    train(ToyTask(), config(max_steps=2), RunDir(run), progress=False)
    earlier = (run / "last" / "training_state.pt").read_bytes()
    train(ToyTask(), config(max_steps=4), RunDir(run), resume=True, progress=False)
    (run / "last" / "training_state.pt").write_bytes(earlier)
    without_hashes(run)
    with pytest.raises(CheckpointError, match=r"training_state\.pt was saved at step 2 but the "
                                              r"weights beside it at step 4: the two files "
                                              r"belong to different checkpoints"):
        train(ToyTask(), config(max_steps=6), RunDir(run), resume=True, progress=False)


def adam(*shapes, steps=1) -> torch.optim.Adam:
    parameters = [torch.nn.Parameter(torch.randn(*shape)) for shape in shapes]
    optimizer = torch.optim.Adam(parameters, lr=0.1, fused=True)
    for _ in range(steps):
        sum(p.sum() for p in parameters).backward()
        optimizer.step()
    return optimizer


def refusal(saved, optimizer) -> str:
    names = [f"p{i}" for i in range(len(optimizer.param_groups[0]["params"]))]
    with pytest.raises(CheckpointError) as error:
        check_optimizer_state(saved, optimizer, names, PATH)
    return str(error.value)


def test_a_matching_state_passes():
    saved = adam((3, 2), (4,)).state_dict()
    check_optimizer_state(saved, adam((3, 2), (4,), steps=0), ["a", "b"], PATH)


def test_another_number_of_parameters_is_refused():
    saved = adam((3, 2), (4,), (5,)).state_dict()
    assert refusal(saved, adam((3, 2), (4,), steps=0)) == (
        f"{PATH} holds optimizer state for 3 parameters in 1 groups but this model has 2 in 1: "
        f"it was saved for another model")


def test_a_state_tensor_of_another_dtype_or_shape_is_refused():
    saved = adam((3, 2), (4,)).state_dict()
    saved["state"][1]["exp_avg_sq"] = saved["state"][1]["exp_avg_sq"].double()
    assert refusal(saved, adam((3, 2), (4,), steps=0)) == (
        f"{PATH} holds optimizer exp_avg_sq of 'p1' as torch.float64 but the parameter is "
        f"torch.float32: it was saved for another model")
    saved = adam((3, 2), (4,)).state_dict()
    saved["state"][0]["step"] = torch.zeros(3)
    assert "holds optimizer step of 'p0' of shape [3], not one number" in refusal(
        saved, adam((3, 2), (4,), steps=0))


def changed(edit):
    """An Adam state_dict after `edit(state_dict)`, which changes it in place."""
    def garble(saved):
        edit(saved)
        return saved
    return garble


@pytest.mark.parametrize(("garble", "words"), [
    (lambda s: [1, 2], "holds no usable optimizer state"),
    (changed(lambda s: s.pop("param_groups")), "holds no usable optimizer state"),
    (changed(lambda s: s["param_groups"][0].pop("betas")), "holds an optimizer group without "
                                                          "'betas'"),
    (changed(lambda s: s["param_groups"][0].update(betas="fast")), "whose 'betas' is 'fast', "
                                                                   "not like"),
    (changed(lambda s: s["state"][0].update(exp_avg=[0.0])), "that is a list, not a tensor"),
    (changed(lambda s: s["state"][0].pop("exp_avg")), "state of different kinds per parameter"),
    (changed(lambda s: s["state"].update({0: "x"})), "no usable optimizer state for 'p0'"),
])
def test_a_garbled_optimizer_state_is_one_sentence(garble, words):
    saved = garble(adam((3, 2), (4,)).state_dict())
    text = refusal(saved, adam((3, 2), (4,), steps=0))
    assert text.startswith(str(PATH)) and words in text and "\n" not in text
