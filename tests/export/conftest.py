"""Tiny trained runs of every task for the export tests, each trained once per test session in
seconds, and their exported model directories."""

import random
import warnings

import pytest

from attnlab import cli
from attnlab.captioning import CaptionTask, write_shapes
from attnlab.captioning.config import RunConfig as CaptionConfig
from attnlab.cli import export
from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.hub import export_model
from attnlab.lm import LanguageModelTask, LMRunConfig
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

TRAIN = {"lr": 0.01, "max_epochs": None, "log_every": 5, "threads": 1, "device": "cpu",
         "tensorboard": False}
DECODE = {"beam": 2, "max_len_ratio": 1.0, "max_len_extra": 4, "batch_size": 16}
MODEL = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
         "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16, "dropout": 0.0,
                     "attention": {"score": "additive", "hidden_dim": 8}}}


@pytest.fixture(autouse=True)
def export_command(monkeypatch):
    """`attnlab export` in `attnlab.cli.main`, also before attnlab.cli lists it."""
    if export not in cli.COMMAND_GROUPS:
        monkeypatch.setattr(cli, "COMMAND_GROUPS", (*cli.COMMAND_GROUPS, export))


def train(task, config, run_dir):
    with warnings.catch_warnings():  # the validation heatmap's missing CJK glyphs: not ours
        warnings.simplefilter("ignore", UserWarning)
        run_experiment(task, config, run_dir, progress=False, log=lambda _: None)
    return run_dir


def translation_config(data_dir, steps, **data):
    data = {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
            "src_lang": "src", "tgt_lang": "tgt", "max_len": 60, "batch_size": 32,
            "valid_sentences": 10, **data}
    return load_config({"data": data, "model": MODEL, "train": {**TRAIN, **steps},
                        "loss": {"label_smoothing": 0.0}, "decode": DECODE}, RunConfig)


@pytest.fixture(scope="session")
def dates_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    write_dates(directory, size=400, seed=5)
    return directory


@pytest.fixture(scope="session")
def dates_run(tmp_path_factory, dates_data):
    """Character level, validated every 10 steps: best/ and last/."""
    steps = {"max_steps": 30, "validate_every": 10, "checkpoint_every": 10,
             "early_stopping": {"metric": "exact_match", "mode": "max"}}
    config = translation_config(dates_data, steps, vocab="char", joint_vocab=False)
    return train(TranslationTask, config, tmp_path_factory.mktemp("runs") / "dates")


@pytest.fixture(scope="session")
def pieces_run(tmp_path_factory, dates_data):
    """Sentencepiece pieces (a .model file beside each vocabulary), never validated: last/ only."""
    steps = {"max_steps": 6, "validate_every": None, "checkpoint_every": 6}
    config = translation_config(dates_data, steps, vocab="bpe", vocab_size=120,
                                joint_vocab=False)
    return train(TranslationTask, config, tmp_path_factory.mktemp("runs") / "pieces")


@pytest.fixture(scope="session")
def shapes_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("shapes")
    write_shapes(directory, size=40, seed=3, image_size=32)
    return directory


@pytest.fixture(scope="session")
def caption_run(tmp_path_factory, shapes_data):
    config = load_config({
        "data": {"json": str(shapes_data / "dataset_shapes.json"),
                 "images": str(shapes_data / "images"), "image_size": 32, "batch_size": 8,
                 "valid_images": 4},
        "model": {"encoder": {"channels": [4, 8]},
                  "decoder": {"embedding_dim": 8, "hidden_dim": 12,
                              "attention": {"score": "additive", "hidden_dim": 6}}},
        "train": {**TRAIN, "lr": 0.01, "max_steps": 4, "validate_every": 4,
                  "early_stopping": {"metric": "bleu4"}},
        "decode": {"beam": 2, "max_len": 12, "batch_size": 4},
    }, CaptionConfig)
    return train(CaptionTask, config, tmp_path_factory.mktemp("runs") / "shapes")


@pytest.fixture(scope="session")
def text_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text")
    rng = random.Random(0)
    nouns, verbs = "cat dog man woman child bird".split(), "sees chases likes feeds".split()

    def sentence():
        return f"the {rng.choice(nouns)} {rng.choice(verbs)} the {rng.choice(nouns)} ."

    for name, count in (("train.txt", 120), ("valid.txt", 10), ("test.txt", 6)):
        (directory / name).write_text("\n".join(sentence() for _ in range(count)) + "\n")
    return directory


@pytest.fixture(scope="session")
def lm_run(tmp_path_factory, text_dir):
    config = load_config({
        "data": {"dir": str(text_dir), "train": "train.txt", "valid": "valid.txt",
                 "test": "test.txt", "vocab": "word", "vocab_size": None, "batch_size": 16},
        "model": {"kind": "lstmn", "embedding_dim": 8, "hidden_dim": 8, "layers": 2,
                  "dropout": 0.0},
        "train": {**TRAIN, "max_steps": 8, "validate_every": 4, "checkpoint_every": 4,
                  "early_stopping": {"metric": "perplexity", "mode": "min"}},
    }, LMRunConfig)
    return train(LanguageModelTask, config, tmp_path_factory.mktemp("runs") / "lm")


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """export(run) -> its model directory (the default checkpoint), written once per run."""
    folder, done = tmp_path_factory.mktemp("models"), {}

    def export_once(run):
        if run not in done:
            done[run] = export_model(run, folder / run.name).path
        return done[run]

    return export_once
