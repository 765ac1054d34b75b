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
def dates_reverse_run(tmp_path_factory, dates_data):
    """The dates run's data the other way (ISO dates to written ones): a reverse model."""
    data = {"dir": str(dates_data), "train": "train", "valid": "val", "test": "test",
            "src_lang": "tgt", "tgt_lang": "src", "vocab": "char", "joint_vocab": False,
            "max_len": 60, "batch_size": 32, "valid_sentences": 20}
    return train_run(tmp_path_factory.mktemp("runs") / "dates-reverse", data, max_steps=30,
                     validate_every=30, checkpoint_every=30)


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


@pytest.fixture(scope="session")
def lm_run(tmp_path_factory):
    """A language-model run (an LSTMN, two updates, only `last`) on a few sentences."""
    from attnlab.lm import LanguageModelTask, LMRunConfig

    text = tmp_path_factory.mktemp("text")
    sentences = "".join(f"{en}\n" for _, en in DE_EN)
    for name in ("train.txt", "valid.txt", "test.txt"):
        (text / name).write_text(sentences, encoding="utf-8")
    config = load_config({
        "data": {"dir": str(text), "train": "train.txt", "valid": "valid.txt",
                 "test": "test.txt", "vocab": "word", "vocab_size": None, "batch_size": 2},
        "model": {"kind": "lstmn", "embedding_dim": 4, "hidden_dim": 4, "dropout": 0.0},
        "train": {**TRAIN, "max_steps": 2, "validate_every": None, "checkpoint_every": 2}},
        LMRunConfig)
    run_dir = tmp_path_factory.mktemp("runs") / "lm"
    run_experiment(LanguageModelTask, config, run_dir, progress=False, log=lambda _: None)
    return run_dir


@pytest.fixture(scope="session")
def shapes_data(tmp_path_factory):
    from attnlab.captioning import write_shapes

    directory = tmp_path_factory.mktemp("shapes")
    write_shapes(directory, size=40, seed=2, image_size=32)
    return directory


@pytest.fixture(scope="session")
def caption_run(tmp_path_factory, shapes_data):
    """A captioning run (soft attention, two updates, only `last`) on 40 shapes images."""
    from attnlab.captioning import CaptionTask
    from attnlab.captioning import RunConfig as CaptionRunConfig

    config = load_config({
        "data": {"json": str(shapes_data / "dataset_shapes.json"),
                 "images": str(shapes_data / "images"), "image_size": 32, "batch_size": 8,
                 "valid_images": 4},
        "model": {"encoder": {"channels": [4, 8]},
                  "decoder": {"embedding_dim": 4, "hidden_dim": 8,
                              "attention": {"score": "additive", "hidden_dim": 4}}},
        "train": {**TRAIN, "max_steps": 2, "validate_every": None, "checkpoint_every": 2},
        "decode": {"beam": 2, "max_len": 6, "batch_size": 2}}, CaptionRunConfig)
    run_dir = tmp_path_factory.mktemp("runs") / "cap"
    run_experiment(CaptionTask, config, run_dir, progress=False, log=lambda _: None)
    return run_dir
