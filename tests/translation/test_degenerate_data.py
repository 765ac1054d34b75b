"""Training data that cannot train is named before training starts: empty training or
validation files, or a training set the length filter emptied (with its counts)."""

import json

import pytest

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.errors import DataError
from attnlab.translation import RunConfig, TranslationTask

from .test_run_safety import CONFIG


@pytest.fixture
def data_dir(tmp_path):
    directory = tmp_path / "data"
    write_dates(directory, size=60, seed=1)
    return directory


def config(data_dir, **data) -> RunConfig:
    settings = json.loads(json.dumps(CONFIG))
    settings["data"].update(dir=str(data_dir), **data)
    return load_config(settings, RunConfig)


def refusal(config) -> str:
    with pytest.raises(DataError) as error:
        TranslationTask(config, None, log=lambda _: None)
    return str(error.value)


def test_empty_training_files_are_named(data_dir):
    for side in ("src", "tgt"):
        (data_dir / f"train.{side}").write_text("")
    assert refusal(config(data_dir)) == (f"no training data in {data_dir / 'train.src'} and "
                                         f"{data_dir / 'train.tgt'}: both files are empty")


def test_training_files_without_a_pair_of_text(data_dir):
    (data_dir / "train.src").write_text("a\n\n \n")
    (data_dir / "train.tgt").write_text("\nb\nc\n")
    assert refusal(config(data_dir)) == (f"no training data in {data_dir / 'train.src'} and "
                                         f"{data_dir / 'train.tgt'}: none of their 3 line pairs "
                                         f"has text on both sides")


def test_a_training_set_the_length_filter_emptied(data_dir):
    (data_dir / "train.src").write_text("abcdef\n\nabcdefg\n")
    (data_dir / "train.tgt").write_text("1234567\nx\n12345678\n")
    assert refusal(config(data_dir, max_len=5)) == (
        f"no training data in {data_dir / 'train.src'} and {data_dir / 'train.tgt'}: kept 0 of "
        f"3 pairs (1 empty, 2 longer than 5 tokens; first at lines 1, 2, 3); raise data.max_len")


def test_empty_validation_files_are_named_when_the_task_is_built(data_dir):
    for side in ("src", "tgt"):
        (data_dir / f"val.{side}").write_text("\n\n")
    assert refusal(config(data_dir)) == (
        f"no validation data in {data_dir / 'val.src'} and {data_dir / 'val.tgt'}: none of "
        f"their 2 line pairs has text on both sides")
    for side in ("src", "tgt"):
        (data_dir / f"val.{side}").write_text("")
    assert refusal(config(data_dir)).endswith("val.tgt: both files are empty")
    for side in ("src", "tgt"):   # text after the lines data.valid_sentences takes
        (data_dir / f"val.{side}").write_text("\n\n3. Mai 2001\n")
    assert refusal(config(data_dir, valid_sentences=2)).endswith(
        "none of their first 2 line pairs has text on both sides")


def test_the_command_writes_nothing(data_dir, tmp_path, capsys):
    (data_dir / "val.src").write_text("")
    (data_dir / "val.tgt").write_text("")
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps({**CONFIG, "data": {**CONFIG["data"], "dir": str(data_dir)}}))
    assert main(["train", str(path), "--run", str(tmp_path / "run"), "--quiet"]) == 2
    assert capsys.readouterr().err == (f"attnlab: error: no validation data in "
                                       f"{data_dir / 'val.src'} and {data_dir / 'val.tgt'}: "
                                       f"both files are empty\n")
    assert not (tmp_path / "run").exists()
