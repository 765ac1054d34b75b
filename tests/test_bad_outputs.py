"""Hostile inputs and outputs outside translation and training: data commands into folders that
cannot be written, caption/lm outputs, oversized images, empty evaluation text, and the CLI's
last fallback. Each gets one sentence, never a traceback."""

import errno
import json

import pytest
from PIL import Image

from attnlab.captioning.data import load_image
from attnlab.cli import main
from attnlab.errors import DataError


@pytest.mark.parametrize("command", [
    ["data", "dates", "--size", "50"], ["data", "shapes", "--size", "2"],
])
def test_data_commands_name_a_destination_that_is_a_file(tmp_path, capsys, command):
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me")
    for dest in (blocker, blocker / "sub"):
        assert main([*command, "--dest", str(dest)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"attnlab: error: cannot write {dest}: ") and "Traceback" not in err
        assert err.count("\n") == 1
    assert blocker.read_text() == "keep me"


def test_a_full_disk_while_writing_data_is_one_sentence(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    assert main(["data", "dates", "--size", "50", "--dest", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == (f"attnlab: error: cannot write {tmp_path / 'd'}: no space "
                                       f"left on the device; free some space or write elsewhere\n")


def test_images_over_the_pixel_limit_are_refused_before_decoding(tmp_path, monkeypatch):
    path = tmp_path / "wide.png"
    Image.new("RGB", (40, 30)).save(path)
    with pytest.raises(DataError, match="is 40 x 30 pixels, more than the 1,000 attnlab decodes"):
        load_image(path, 16, max_pixels=1000)
    assert load_image(path, 16)[0].shape == (16, 16, 3)
    # Pillow's own bomb check (at open) gets the same kind of sentence
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with pytest.raises(DataError, match="declares more than the"):
        load_image(path, 16)


def test_garbage_image_is_one_sentence(tmp_path):
    path = tmp_path / "x.png"
    path.write_bytes(b"\x89PNG not really")
    with pytest.raises(DataError, match=f"cannot read image {path}"):
        load_image(path, 16)


@pytest.mark.parametrize(("task", "command"), [
    ("captioning", ["plot", "--run", "R", "image.png", "--output", "OUT"]),
    ("captioning", ["evaluate", "--run", "R", "--output", "OUT"]),
    ("lm", ["lm", "plot", "--run", "R", "a sentence", "--output", "OUT"]),
])
def test_output_folders_are_checked_before_any_run_is_read(tmp_path, capsys, task, command):
    # The --run path is checked first (its meta.json says the task, whose options apply), then
    # the outputs, before the run's model is read: this run has a checkpoint folder whose model
    # (and config) cannot be read at all.
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    (run / "best" / "model.safetensors").write_bytes(b"not a model")
    (run / "best" / "meta.json").write_text(json.dumps(
        {"format_version": 3, "step": 1, "signature": {"task": task}, "files": {}}))
    out = tmp_path / "missing" / "out.png"
    argv = [str(out) if part == "OUT" else str(run) if part == "R" else part
            for part in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"cannot write {out}: its folder {out.parent} does not exist" in err


def test_unexpected_errors_are_one_sentence_and_debug_shows_the_traceback(capsys, monkeypatch):
    from attnlab.cli import data as data_commands

    def broken(args):
        raise RuntimeError("something nobody wrote a message for\nsecond line")

    monkeypatch.setattr(data_commands, "run_dates", broken)
    parser_default = ["data", "dates", "--dest", "x"]
    monkeypatch.setattr("attnlab.cli.data.run_dates", broken)
    assert main(parser_default) == 1
    err = capsys.readouterr().err
    assert err == ("attnlab: error: unexpected RuntimeError: something nobody wrote a message "
                   "for; run with --debug for the traceback\n")
    with pytest.raises(RuntimeError):
        main([*parser_default, "--debug"])


@pytest.mark.slow
def test_perplexity_of_an_empty_file_is_refused_not_one(tmp_path, capsys):
    from attnlab.config import load_config
    from attnlab.lm import LanguageModelRun, LanguageModelTask, LMRunConfig
    from attnlab.train import run_experiment

    (tmp_path / "train.txt").write_text("the cat sees the dog .\nthe dog sees it .\n" * 4)
    config = load_config({
        "data": {"dir": str(tmp_path), "train": "train.txt", "valid": "train.txt", "test": None,
                 "vocab": "word", "vocab_size": None, "batch_size": 4},
        "model": {"kind": "lstm", "embedding_dim": 4, "hidden_dim": 4, "dropout": 0.0},
        "train": {"max_steps": 1, "max_epochs": None, "validate_every": None, "threads": 1,
                  "tensorboard": False}}, LMRunConfig)
    run_experiment(LanguageModelTask, config, tmp_path / "run", progress=False, log=lambda _: 0)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    with pytest.raises(DataError, match=f"no sentence to score in {empty}"):
        LanguageModelRun.load(tmp_path / "run").evaluate(text=empty)
    assert main(["evaluate", "--run", str(tmp_path / "run"), "--text", str(empty)]) == 2
    assert "perplexity 1.00" not in capsys.readouterr().out
