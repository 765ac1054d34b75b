"""Translation training end to end on a tiny dates corpus: train, validate, resume, errors."""

import json
from functools import partial

import pytest
import torch

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.data import write_dates
from attnlab.errors import CheckpointError, ConfigError, DataError
from attnlab.train import run_experiment
from attnlab.train.checkpoint import RunDir
from attnlab.translation import RunConfig, TranslationTask, translate

train_translation = partial(run_experiment, TranslationTask)  # train a TranslationTask run

CONFIG = {
    "data": {"train": "train", "valid": "val", "test": "test", "src_lang": "src",
             "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False, "max_len": 60,
             "batch_size": 16, "valid_sentences": 20},
    "model": {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.1},
              "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16,
                          "dropout": 0.1, "attention": {"score": "additive"}}},
    "train": {"lr": 0.01, "max_steps": 12, "max_epochs": None, "validate_every": 6,
              "checkpoint_every": 4, "log_every": 2, "threads": 1,
              "early_stopping": {"metric": "exact_match", "mode": "max"}},
    "decode": {"max_len_ratio": 0.0, "max_len_extra": 12, "batch_size": 8},
}


@pytest.fixture(scope="module")
def dates_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    write_dates(directory, size=300, seed=3)
    return directory


def tiny_config(dates_dir, **train):
    data = json.loads(json.dumps(CONFIG))
    data["data"]["dir"] = str(dates_dir)
    data["train"].update(train)
    return load_config(data, RunConfig)


@pytest.mark.slow
def test_trains_validates_and_checkpoints(dates_dir, tmp_path):
    config = tiny_config(dates_dir)
    result = train_translation(config, tmp_path / "run", progress=False, log=lambda _: None)
    assert result.steps == 12
    run = RunDir(tmp_path / "run")
    assert run.has_checkpoint("last") and run.has_checkpoint("best")
    assert (tmp_path / "run" / "config.json").is_file()
    task = TranslationTask(config, tmp_path / "run", log=lambda _: None)
    run.load_checkpoint("best", task.model)
    validation = task.validate(task.model)
    assert {"bleu", "loss", "perplexity", "chrf", "exact_match"} <= set(validation.metrics)
    assert validation.images["alignment"].ndim == 3
    out = translate(task.model, task.vocabs, ["5. März 2024"], config.decode.greedy())[0]
    assert out.attention.shape == (len(out.target_pieces), len(out.source_pieces))


@pytest.mark.slow
def test_resume_continues_exactly(dates_dir, tmp_path):
    straight = train_translation(tiny_config(dates_dir), tmp_path / "a", progress=False,
                                 log=lambda _: None)
    train_translation(tiny_config(dates_dir, max_steps=8), tmp_path / "b", progress=False,
                      log=lambda _: None)
    resumed = train_translation(tiny_config(dates_dir), tmp_path / "b", resume=True,
                                progress=False, log=lambda _: None)
    assert straight.steps == resumed.steps == 12
    weights = [RunDir(tmp_path / name).file("last/model.safetensors").read_bytes()
               for name in ("a", "b")]
    assert weights[0] == weights[1]


@pytest.mark.slow
def test_checkpoint_of_another_model_is_refused(dates_dir, tmp_path):
    train_translation(tiny_config(dates_dir, max_steps=2), tmp_path / "run", progress=False,
                      log=lambda _: None)
    other = tiny_config(dates_dir)
    other.model.decoder.hidden_dim = 24
    with pytest.raises(CheckpointError):
        train_translation(other, tmp_path / "run", resume=True, progress=False,
                          log=lambda _: None)


def test_unknown_config_key_names_the_closest(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("model:\n  decoder:\n    hiden_dim: 5\n")
    with pytest.raises(ConfigError, match=r"model.decoder.hiden_dim.*model.decoder.hidden_dim"):
        load_config(path, RunConfig)


def test_missing_data_is_one_clear_sentence(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(f"data: {{dir: {tmp_path / 'nowhere'}}}\n")
    assert main(["train", str(config), "--run", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "data file not found" in err and "Traceback" not in err
    with pytest.raises(DataError):
        train_translation(load_config(config, RunConfig), tmp_path / "r", progress=False)


@pytest.mark.parametrize("name", ["multi30k-seq2seq", "multi30k-bahdanau", "multi30k-luong-dot",
                                  "multi30k-luong-general", "multi30k-luong-concat",
                                  "multi30k-luong-location", "multi30k-local-m",
                                  "multi30k-local-p", "dates-bahdanau", "multi30k-transformer",
                                  "dates-transformer"])
def test_shipped_configs_load_and_build(name):
    from attnlab.models import build_model

    config = load_config(config_path(name), RunConfig)
    model = build_model(config.model, 50, 60, max_src_len=config.data.max_len + 1)
    src = torch.randint(4, 50, (2, 7))
    out = model.all_positions(src, torch.ones(2, 7, dtype=torch.bool), torch.randint(4, 60, (2, 5)))
    assert out.logits.shape == (2, 5, 60)
