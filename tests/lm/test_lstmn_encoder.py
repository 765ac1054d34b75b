"""A translation model with an LSTMN encoder trains through the shared translation recipe, and
its encoder's reading figure is drawn."""

import json
from functools import partial

import pytest
import torch
from PIL import Image

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.configs import config_path
from attnlab.data import write_dates
from attnlab.data.dates import FIRST_WORLD
from attnlab.models import build_model
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

train_translation = partial(run_experiment, TranslationTask)  # train a TranslationTask run

STEPS = 300
CONFIG = {
    "data": {"train": "train", "valid": "val", "test": "test", "src_lang": "src",
             "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False, "max_len": 40,
             "batch_size": 32, "valid_sentences": 16},
    "model": {"encoder": {"kind": "lstmn", "embedding_dim": 12, "hidden_dim": 24,
                          "bidirectional": False, "dropout": 0.0},
              "decoder": {"kind": "luong", "embedding_dim": 12, "hidden_dim": 24,
                          "input_feeding": False, "dropout": 0.0,
                          "attention": {"score": "general"}}},
    "train": {"lr": 0.01, "max_steps": STEPS, "max_epochs": None, "validate_every": None,
              "checkpoint_every": None, "log_every": 50, "threads": 1, "tensorboard": False},
    "decode": {"max_len_ratio": 0.0, "max_len_extra": 11, "batch_size": 16},
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lstmn-encoder")
    # the dates as first made (1950-2049): what this tiny run learns enough of in its steps
    write_dates(directory / "data", size=400, seed=5, world=FIRST_WORLD)
    data = json.loads(json.dumps(CONFIG))
    data["data"]["dir"] = str(directory / "data")
    config = load_config(data, RunConfig)
    result = train_translation(config, directory / "run", progress=False, log=lambda _: None)
    return directory / "run", result


@pytest.mark.slow
def test_trains_a_few_hundred_steps_and_learns(trained):
    run, result = trained
    assert result.steps == STEPS
    # Digits cannot be guessed without reading the source: a low loss and exact dates mean the
    # decoder reads the LSTMN's annotations (this run reaches ~0.5 nats and ~40% exact).
    assert result.last_metrics["loss"] < 1.0
    assert result.last_metrics["exact_match"] > 10


@pytest.mark.slow
def test_reading_figure_of_the_encoder(trained, capsys):
    run, _ = trained
    output = run / "figures" / "reading.png"
    output.parent.mkdir()  # an output folder must exist: plot refuses a missing one, in one line
    assert main(["lm", "plot", "--run", str(run), "5. März 2024", "--output", str(output)]) == 0
    assert output.is_file() and output.with_name("reading-matrix.png").is_file()
    with Image.open(output) as image:
        assert image.format == "PNG"


def test_shipped_config_builds():
    config = load_config(config_path("multi30k-lstmn-encoder"), RunConfig)
    model = build_model(config.model, 50, 60, max_src_len=config.data.max_len + 1)
    src = torch.randint(4, 50, (2, 7))
    out = model.all_positions(src, torch.ones(2, 7, dtype=torch.bool), torch.randint(4, 60, (2, 5)))
    assert out.logits.shape == (2, 5, 60)
