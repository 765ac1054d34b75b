"""Run directories: atomic checkpoints, crash recovery, and refusing damaged or foreign files."""

import errno
import hashlib
import json
import os
import shutil

import pytest
import torch
from toy_task import ToyModel, parameters

from attnlab.errors import CheckpointError, WriteError
from attnlab.train import RunDir, checkpoint
from attnlab.train.identity import sha256_of

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


def test_a_sampler_state_of_the_first_sampler_is_refused(tmp_path):
    # it named no order: one sentence, to train again (no upgrade before the first release)
    run_dir = RunDir(tmp_path / "run")
    sampler = {"epoch": 2, "batches_done": 3, "seed": 1}
    run_dir.save_checkpoint("last", model(), SIGNATURE, training_state={"sampler": sampler})
    with pytest.raises(CheckpointError, match=r"^the training state's sampler names no order, "
                                              r"as an earlier attnlab wrote it: train it again"):
        run_dir.load_checkpoint("last", model(), SIGNATURE)


def test_config_round_trip(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    run_dir.write_config({"train": {"lr": 0.001}})
    assert json.loads(run_dir.file("config.json").read_text()) == {"train": {"lr": 0.001}}
    assert run_dir.read_config() == {"train": {"lr": 0.001}}
    assert sorted(p.name for p in run_dir.path.iterdir()) == ["config.json"]


def test_a_key_the_saved_signature_lacks_is_a_difference(tmp_path):
    # No leniency for keys the saved side lacks: an older run is refused (train/formats.py),
    # never read as meaning something.
    run_dir = RunDir(tmp_path)
    save(run_dir, model())
    for value in (None, False, 0, 3):
        with pytest.raises(CheckpointError, match=r"signature\.window is '<absent>' there"):
            run_dir.load_checkpoint("last", model(), {**SIGNATURE, "window": value})


def test_meta_records_the_sha256_of_each_file(tmp_path):
    directory = save(RunDir(tmp_path), model(), step=3)
    files = json.loads((directory / "meta.json").read_text())["files"]
    assert sorted(files) == ["model.safetensors", "training_state.pt"]
    for name, entry in files.items():
        data = (directory / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


@pytest.mark.parametrize("file", ["model.safetensors", "training_state.pt"])
def test_a_file_copied_from_another_checkpoint_is_refused(tmp_path, file):
    run_dir, other = RunDir(tmp_path / "run"), RunDir(tmp_path / "other")
    save(run_dir, model(seed=0), step=5)
    save(other, model(seed=1), step=5)
    shutil.copyfile(other.file(f"last/{file}"), run_dir.file(f"last/{file}"))
    last = run_dir.path / "last"
    with pytest.raises(CheckpointError) as error:
        run_dir.load_checkpoint("last", model())
    assert str(error.value) == (f"{last / file} is not the file checkpoint {last} saved (step "
                                f"5): its content differs from what meta.json records "
                                f"(damaged, or copied from another run)")


def test_a_training_state_put_into_best_is_refused(tmp_path):
    run_dir = RunDir(tmp_path)
    save(run_dir, model(), name="last")
    run_dir.save_checkpoint("best", model(), SIGNATURE, info={"step": 1})
    shutil.copyfile(run_dir.file("last/training_state.pt"), run_dir.file("best/training_state.pt"))
    with pytest.raises(CheckpointError, match=r"best/training_state\.pt does not belong to "
                                              r"checkpoint .*records no training_state\.pt"):
        run_dir.load_checkpoint("best", model())


def test_checkpoints_written_before_the_hashes_are_refused(tmp_path):
    run_dir = RunDir(tmp_path)
    meta_path = save(run_dir, model(), step=4) / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["files"]
    meta["format_version"] = 1
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"last is in run format 1, written by attnlab "
                                              r"\S+; this attnlab reads format 3 only"):
        run_dir.load_checkpoint("last", model())


@pytest.mark.parametrize("failing", ["model.safetensors", "training_state.pt", "meta.json"])
def test_a_full_disk_while_saving_keeps_the_previous_checkpoint(tmp_path, monkeypatch, failing):
    run_dir, first = RunDir(tmp_path), model(seed=0)
    save(run_dir, first, step=1)
    write = checkpoint._write_file

    def full_disk(path, data):
        if path.name == failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, data)

    monkeypatch.setattr(checkpoint, "_write_file", full_disk)
    with pytest.raises(WriteError) as error:
        save(run_dir, model(seed=2), step=2)
    assert str(error.value) == (f"cannot write {tmp_path / 'last'}: no space left on the "
                                f"device; free some space or write elsewhere (the previous "
                                f"last/, step 1, is kept)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]   # no last.tmp left behind
    restored = model(seed=3)
    assert run_dir.load_checkpoint("last", restored).meta["step"] == 1
    assert torch.equal(restored.hidden.weight, first.hidden.weight)


def test_a_read_only_file_system_mid_rename_keeps_the_previous_checkpoint(tmp_path,
                                                                          monkeypatch):
    run_dir, first = RunDir(tmp_path), model(seed=0)
    save(run_dir, first, step=1)
    rename, calls = os.rename, []

    def read_only_after_one(source, target):
        calls.append(target)
        if len(calls) > 1:   # last -> last.old went through; last.tmp -> last fails
            raise OSError(errno.EROFS, "Read-only file system")
        rename(source, target)

    monkeypatch.setattr(os, "rename", read_only_after_one)
    with pytest.raises(WriteError, match=r"cannot write .*last: the file system is read-only; "
                                         r"write elsewhere \(the previous last/, step 1"):
        save(run_dir, model(seed=2), step=2)
    monkeypatch.undo()
    assert run_dir.checkpoint_dir("last") == tmp_path / "last.old"
    restored = model(seed=3)
    assert run_dir.load_checkpoint("last", restored).meta["step"] == 1
    assert torch.equal(restored.hidden.weight, first.hidden.weight)


def test_a_checkpoint_below_a_file_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(WriteError) as error:
        save(RunDir(tmp_path / "file" / "run"), model())
    assert str(error.value) == (f"cannot write {tmp_path / 'file' / 'run' / 'last'}: a part of "
                                f"the path is a file, not a folder")


@pytest.mark.parametrize("content", [b"", b"garbage", b"PK\x03\x04" + b"\0" * 40])
def test_garbage_training_state_is_one_sentence(tmp_path, content):
    run_dir = RunDir(tmp_path)
    meta_path = save(run_dir, model()) / "meta.json"
    (tmp_path / "last" / "training_state.pt").write_bytes(content)
    with pytest.raises(CheckpointError, match=r"training_state\.pt is not the file"):
        run_dir.load_checkpoint("last", model())
    meta = json.loads(meta_path.read_text())
    state = meta["files"]["training_state.pt"]  # recorded as it is now: torch.load refuses
    state["sha256"] = sha256_of(tmp_path / "last" / "training_state.pt")
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError) as error:
        run_dir.load_checkpoint("last", model())
    assert str(error.value).startswith(f"cannot load {tmp_path / 'last' / 'training_state.pt'} "
                                       f"(damaged?): ")
    assert "\n" not in str(error.value)
