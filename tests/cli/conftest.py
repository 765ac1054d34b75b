"""Tiny trained runs for the command-line tests, each trained once per test process in seconds:
a character-level dates run (with a `best` checkpoint) and a word-level German-English run
(only `last`), plus an RWTH-format gold set for the latter."""

from functools import partial

import pytest

from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

train_translation = partial(run_experiment, TranslationTask)  # train a TranslationTask run

MODEL = {"encoder": {"embedding_dim": 8, "hidden_dim": 8, "dropout": 0.0},
         "decoder": {"kind": "bahdanau", "embedding_dim": 8, "hidden_dim": 16, "dropout": 0.0,
                     "attention": {"score": "additive", "hidden_dim": 8}}}
TRAIN = {"lr": 0.01, "max_epochs": None, "log_every": 5, "threads": 1, "device": "cpu",
         "tensorboard": False}

# German-English pairs in the style of the RWTH set (tokenised), with umlauts and ß.
DE_EN = [
    ("Zwei Männer spielen Fußball .", "Two men play football ."),
    ("Wir glauben nicht , daß das stimmt .", "We do not believe that this is right ."),
    ("Das ist richtig und notwendig .", "That is right and necessary ."),
    ("Die Frau läuft über die Straße .", "The woman walks across the street ."),
    ("Ein Mann spielt Gitarre .", "A man plays guitar ."),
    ("Kinder spielen im Park .", "Children play in the park ."),
]
# 1-indexed German-English links (sure i-j, possible ipj) for the first three pairs.
TALP = ["1-1 2-2 3-3 4-4 5-5", "1-1 2p2 3-3 2-4 4-5 5-6 6-7 6p8 7-9", "1-1 2-2 3-3 4-4 5-5 6-6"]


def train_run(run_dir, data, model=MODEL, **train):
    config = load_config({"data": data, "model": model, "train": {**TRAIN, **train},
                          "loss": {"label_smoothing": 0.0},
                          "decode": {"beam": 2, "max_len_ratio": 1.0, "max_len_extra": 4,
                                     "batch_size": 16}}, RunConfig)
    train_translation(config, run_dir, progress=False, log=lambda _: None)
    return run_dir


@pytest.fixture(scope="session")
def dates_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    write_dates(directory, size=1000, seed=5)  # enough dates for every Chinese date character
    return directory


@pytest.fixture(scope="session")
def dates_run(tmp_path_factory, dates_data):
    data = {"dir": str(dates_data), "train": "train", "valid": "val", "test": "test",
            "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
            "max_len": 60, "batch_size": 32, "valid_sentences": 20}
    return train_run(tmp_path_factory.mktemp("runs") / "dates", data, max_steps=30,
                     validate_every=30, checkpoint_every=30,
                     early_stopping={"metric": "exact_match", "mode": "max"})


@pytest.fixture(scope="session")
def deen_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("deen")
    for split in ("train", "val"):
        for index, lang in enumerate(("de", "en")):
            lines = "".join(pair[index] + "\n" for pair in DE_EN)
            (directory / f"{split}.{lang}").write_text(lines, encoding="utf-8")
    return directory


@pytest.fixture(scope="session")
def deen_run(tmp_path_factory, deen_data):
    data = {"dir": str(deen_data), "train": "train", "valid": "val", "test": "val",
            "src_lang": "de", "tgt_lang": "en", "vocab": "word", "joint_vocab": False,
            "vocab_size": 200, "max_len": 20, "batch_size": 3}
    # No early-stopping metric: the run has only a `last` checkpoint.
    return train_run(tmp_path_factory.mktemp("runs") / "deen", data, max_steps=4,
                     validate_every=None, checkpoint_every=4)


@pytest.fixture(scope="session")
def rwth_root(tmp_path_factory):
    """An ATTNLAB_DATA folder holding rwth-deen-gold/ in the shared set's format."""
    root = tmp_path_factory.mktemp("shared-data")
    gold = root / "rwth-deen-gold"
    gold.mkdir()
    text = "".join(f"{de} ||| {en}\n" for de, en in DE_EN[: len(TALP)])
    (gold / "test.de-en").write_text(text, encoding="utf-8")
    (gold / "deen.talp").write_text("".join(line + " \n" for line in TALP), encoding="utf-8")
    return root
