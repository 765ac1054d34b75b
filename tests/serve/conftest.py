"""Tiny trained runs for the server tests, each trained once per test session in seconds: a
character-level dates translation run (Bahdanau), a word-level German-English run without
attention, a shapes captioning run and an LSTMN language model; and the app serving them all."""

import random
import warnings

import pytest
from fastapi.testclient import TestClient

from attnlab.captioning import CaptionTask, write_shapes
from attnlab.captioning.config import RunConfig as CaptionRunConfig
from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.data.dates import FIRST_WORLD
from attnlab.lm import LanguageModelTask, LMRunConfig
from attnlab.serve import Limits, create_app
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

TRAIN = {"lr": 0.01, "max_epochs": None, "log_every": 50, "threads": 1, "device": "cpu",
         "tensorboard": False, "validate_every": None}
DECODE = {"beam": 3, "max_len_ratio": 1.0, "max_len_extra": 4, "batch_size": 16}
DE_EN = [("Zwei Männer spielen Fußball .", "Two men play football ."),
         ("Die Frau läuft über die Straße .", "The woman walks across the street ."),
         ("Ein Mann spielt Gitarre .", "A man plays guitar ."),
         ("Kinder spielen im Park .", "Children play in the park .")]


def train(task, config, run_dir):
    with warnings.catch_warnings():  # the validation heatmap's missing CJK glyphs: not ours
        warnings.simplefilter("ignore", UserWarning)
        run_experiment(task, config, run_dir, progress=False, log=lambda _: None)
    return run_dir


def translation_config(data, decoder, steps):
    model = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
             "decoder": {"embedding_dim": 8, "hidden_dim": 16, "dropout": 0.0, **decoder}}
    return load_config({"data": data, "model": model,
                        "train": {**TRAIN, "max_steps": steps, "checkpoint_every": steps},
                        "loss": {"label_smoothing": 0.0}, "decode": DECODE}, RunConfig)


@pytest.fixture(scope="session")
def dates_run(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("dates")
    # the dates as first made (1950-2049): what this tiny run learns enough of in its steps
    write_dates(data_dir, size=400, seed=5, world=FIRST_WORLD)
    data = {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
            "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
            "max_len": 60, "batch_size": 32, "valid_sentences": 10}
    decoder = {"kind": "bahdanau", "attention": {"score": "additive", "hidden_dim": 8}}
    return train(TranslationTask, translation_config(data, decoder, 40),
                 tmp_path_factory.mktemp("runs") / "dates")


@pytest.fixture(scope="session")
def plain_run(tmp_path_factory):
    """Word level, no attention: its hypotheses carry attention null."""
    data_dir = tmp_path_factory.mktemp("deen")
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            text = "".join(pair[index] + "\n" for pair in DE_EN)
            (data_dir / f"{split}.{lang}").write_text(text, encoding="utf-8")
    data = {"dir": str(data_dir), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 100, "max_len": 20, "batch_size": 4}
    return train(TranslationTask, translation_config(data, {"kind": "none"}, 4),
                 tmp_path_factory.mktemp("runs") / "plain")


@pytest.fixture(scope="session")
def shapes_run(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("shapes")
    write_shapes(data_dir, size=30, seed=2, image_size=32)
    config = load_config({
        "data": {"json": str(data_dir / "dataset_shapes.json"),
                 "images": str(data_dir / "images"), "image_size": 32, "batch_size": 8,
                 "valid_images": 3},
        "model": {"encoder": {"channels": [4, 8]},
                  "decoder": {"embedding_dim": 8, "hidden_dim": 12,
                              "attention": {"score": "additive", "hidden_dim": 6}}},
        "train": {**TRAIN, "max_steps": 4, "checkpoint_every": 4},
        "decode": {"beam": 2, "max_len": 12, "batch_size": 4}}, CaptionRunConfig)
    return train(CaptionTask, config, tmp_path_factory.mktemp("runs") / "shapes")


@pytest.fixture(scope="session")
def lstmn_run(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("text")
    rng = random.Random(0)
    nouns = "cat dog man woman child bird".split()
    lines = [f"the {rng.choice(nouns)} sees the {rng.choice(nouns)} ." for _ in range(60)]
    (data_dir / "train.txt").write_text("\n".join(lines) + "\n")
    (data_dir / "valid.txt").write_text("\n".join(lines[:6]) + "\n")
    config = load_config({
        "data": {"dir": str(data_dir), "train": "train.txt", "valid": "valid.txt", "test": None,
                 "vocab": "word", "vocab_size": None, "batch_size": 16},
        "model": {"kind": "lstmn", "embedding_dim": 8, "hidden_dim": 8, "layers": 2,
                  "dropout": 0.0},
        "train": {**TRAIN, "max_steps": 4, "checkpoint_every": 4}}, LMRunConfig)
    return train(LanguageModelTask, config, tmp_path_factory.mktemp("runs") / "lstmn")


@pytest.fixture(scope="session")
def runs(dates_run, plain_run, shapes_run, lstmn_run):
    return {"dates": dates_run, "plain": plain_run, "shapes": shapes_run, "lstmn": lstmn_run}


LOCAL = "http://127.0.0.1"  # TestClient's own "testserver" is not a name the app answers to


def open_client(runs, **limits):
    """A TestClient (as a context manager: the app's shutdown stops its worker) of a new app."""
    return TestClient(create_app(runs, Limits(**limits)), base_url=LOCAL)


@pytest.fixture(scope="session")
def client(runs):
    with open_client(runs) as client:
        yield client


@pytest.fixture
def make_client(runs):
    """Apps with other limits: make_client(queue_size=1) -> an open TestClient."""
    opened = []

    def make(**limits):
        client = open_client(runs, **limits)
        opened.append(client)
        return client.__enter__()

    yield make
    for client in opened:
        client.__exit__(None, None, None)


