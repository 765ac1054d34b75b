"""The run layer: which checkpoint a run loads, which task it belongs to, and the one-sentence
errors for a run that is missing, empty or of another task."""

import pytest
import torch
from toy_task import ToyModel

from attnlab.errors import CheckpointError, ConfigError
from attnlab.train import RunDir, choose_checkpoint, open_run, perplexity, pick_device, run_task
from attnlab.train.config import ExperimentConfig


def save(path, name, task="translation"):
    RunDir(path).save_checkpoint(name, ToyModel(11, 4, dropout=0.0), {"task": task},
                                 info={"step": 1})
    RunDir(path).write_config({"train": {"lr": 0.5}})


def test_best_else_last_and_a_named_checkpoint(tmp_path):
    save(tmp_path, "last")
    run_dir = RunDir(tmp_path)
    assert choose_checkpoint(run_dir, None) == "last"
    with pytest.raises(CheckpointError, match="no 'best' checkpoint, only 'last'"):
        choose_checkpoint(run_dir, "best")
    save(tmp_path, "best")
    assert choose_checkpoint(run_dir, None) == "best"
    assert choose_checkpoint(run_dir, "last") == "last"


def test_missing_or_empty_runs_are_one_sentence(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        choose_checkpoint(RunDir(tmp_path / "nope"), None)
    with pytest.raises(CheckpointError, match="has no checkpoint"):
        choose_checkpoint(RunDir(tmp_path), None)


def test_a_run_of_another_task_is_named_before_its_config_is_read(tmp_path):
    save(tmp_path, "last", task="captioning")
    (tmp_path / "config.json").write_text('{"data": {"json": "x"}}')  # not a translation config
    assert run_task(tmp_path) == "captioning"
    with pytest.raises(CheckpointError, match="is a captioning run, not a translation run"):
        open_run(tmp_path, ExperimentConfig, task="translation")


def test_open_run_reads_the_config_and_meta(tmp_path):
    save(tmp_path, "best")
    run = open_run(tmp_path, ExperimentConfig, task="translation")
    assert run.checkpoint == "best" and run.meta["step"] == 1 and run.config.train.lr == 0.5


def test_devices_and_perplexity():
    assert pick_device("cpu") == torch.device("cpu")
    with pytest.raises(ConfigError, match="unknown device"):
        pick_device("gpu7")
    assert perplexity(0.0) == 1.0 and perplexity(1e9) == perplexity(50.0)
