"""A tiny trained Transformer translation run for the tests of its layer and head views (the
plot, the explorer, the notebook): character-level dates, 2 layers of 2 heads, a few steps."""

import warnings
from pathlib import Path

from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.train import run_experiment
from attnlab.translation import RunConfig, TranslationTask

LAYERS, HEADS = 2, 2


def transformer_run(directory: Path, steps: int = 4) -> Path:
    """Train the run into directory/run (its data in directory/data); returns the run."""
    data_dir = directory / "data"
    write_dates(data_dir, size=200, seed=5)
    sides = {"embedding_dim": 8, "hidden_dim": 8, "layers": LAYERS, "heads": HEADS,
             "ff_dim": 12, "dropout": 0.0}
    config = load_config({
        "data": {"dir": str(data_dir), "train": "train", "valid": "val", "test": "test",
                 "src_lang": "src", "tgt_lang": "tgt", "vocab": "char", "joint_vocab": False,
                 "max_len": 60, "batch_size": 32, "valid_sentences": 5},
        "model": {"encoder": {"kind": "transformer", **sides},
                  "decoder": {"kind": "transformer", **sides,
                              "attention": {"score": "scaled_dot"}}},
        "train": {"lr": 0.01, "max_epochs": None, "log_every": 50, "threads": 1,
                  "device": "cpu", "tensorboard": False, "validate_every": None,
                  "max_steps": steps, "checkpoint_every": steps},
        "loss": {"label_smoothing": 0.0},
        "decode": {"beam": 3, "max_len_ratio": 1.0, "max_len_extra": 4, "batch_size": 16}},
        RunConfig)
    with warnings.catch_warnings():  # the validation heatmap's missing glyphs: not ours
        warnings.simplefilter("ignore", UserWarning)
        run_experiment(TranslationTask, config, directory / "run", progress=False,
                       log=lambda _: None)
    return directory / "run"
