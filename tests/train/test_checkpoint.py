"""Run directories: atomic checkpoints, crash recovery, and refusing damaged or foreign files."""

import json

import pytest
import torch
from toy_task import ToyModel, parameters

from attnlab.errors import CheckpointError
from attnlab.train import RunDir

SIGNATURE = {"model": "ToyModel", "dim": 8, "vocab_size": 11}


def model(dim=8, seed=0):
    torch.manual_seed(seed)
    return ToyModel(11, dim, dropout=0.0)


def save(run_dir, source, step=1, name="last"):
    state = {"step": step, "rng": torch.get_rng_state(), "betas": (0.9, 0.999)}
    return run_dir.save_checkpoint(name, source, SIGNATURE, training_state=state,
                                   info={"step": step})


def test_round_trip_keeps_tied_weights_and_state(tmp_path):
    run_dir, source, target = RunDir(tmp_path / "run"), model(seed=0), model(seed=1)
    save(run_dir, source, step=7)
    checkpoint = run_dir.load_checkpoint("last", target, SIGNATURE)
    for name, value in parameters(source).items():
        assert torch.equal(parameters(target)[name], value)
    assert target.out.weight is target.embedding.weight
    assert checkpoint.training_state["step"] == 7
    assert checkpoint.training_state["betas"] == (0.9, 0.999)
    assert checkpoint.meta["step"] == 7 and checkpoint.meta["model_class"] == "ToyModel"
    assert sorted(p.name for p in run_dir.path.iterdir()) == ["last"]


def test_crash_between_renames_falls_back_to_old(tmp_path):
    run_dir, first = RunDir(tmp_path), model(seed=0)
    save(run_dir, first, step=1)
    # A crash after `last` became `last.old` and before `last.tmp` became `last`:
    (tmp_path / "last").rename(tmp_path / "last.old")
    (tmp_path / "last.tmp").mkdir()
    (tmp_path / "last.tmp" / "model.safetensors").write_bytes(b"half")
    assert run_dir.checkpoint_dir("last") == tmp_path / "last.old"
    assert run_dir.load_checkpoint("last", model(seed=1)).meta["step"] == 1
    save(run_dir, model(seed=2), step=2)   # the next save cleans up both leftovers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]
    assert run_dir.read_meta("last")["step"] == 2


@pytest.mark.parametrize("file", ["model.safetensors", "training_state.pt", "meta.json"])
def test_truncated_file_is_named(tmp_path, file):
    run_dir = RunDir(tmp_path)
    path = save(run_dir, model()) / file
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(CheckpointError, match=file.replace(".", r"\.")):
        run_dir.load_checkpoint("last", model())


def test_pickled_code_is_not_executed(tmp_path):
    run_dir = RunDir(tmp_path)
    path = save(run_dir, model()) / "training_state.pt"
    torch.save({"evil": print}, path)   # a global that weights_only refuses
    with pytest.raises(CheckpointError, match="training_state.pt"):
        run_dir.load_checkpoint("last", model())


def test_foreign_checkpoints_are_refused(tmp_path):
    run_dir = RunDir(tmp_path)
    save(run_dir, model())
    with pytest.raises(CheckpointError, match=r"signature\.dim is 8 there but 6"):
        run_dir.load_checkpoint("last", model(dim=6), {**SIGNATURE, "dim": 6})
    # Same signature, other shapes (a task whose signature forgot a setting):
    with pytest.raises(CheckpointError, match=r"'embedding.weight' of shape \[11, 8\].* \[11, 6\]"):
        run_dir.load_checkpoint("last", model(dim=6), SIGNATURE)
    with pytest.raises(CheckpointError, match="no checkpoint .*best"):
        run_dir.load_checkpoint("best", model())


def test_config_and_kept_files(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    run_dir.write_config({"train": {"lr": 0.001}})
    assert json.loads(run_dir.file("config.json").read_text()) == {"train": {"lr": 0.001}}
    assert run_dir.read_config() == {"train": {"lr": 0.001}}
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("a\nb\n")
    assert run_dir.keep_file(vocabulary, "vocab.src.txt").read_text() == "a\nb\n"


def test_keys_added_later_with_an_off_default_still_match(tmp_path):
    # A run written before a config key existed loads when the new key is off (None / False),
    # and is refused when the new key is on, or when it is 0 (not the same as False).
    run_dir = RunDir(tmp_path)
    save(run_dir, model())
    for off in (None, False):
        run_dir.load_checkpoint("last", model(), {**SIGNATURE, "window": off})
    for on in (True, 0, 3):
        with pytest.raises(CheckpointError, match=r"signature\.window is '<absent>' there"):
            run_dir.load_checkpoint("last", model(), {**SIGNATURE, "window": on})
