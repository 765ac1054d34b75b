"""Train a language model end to end, and load a trained one back from its run directory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from attnlab.config import config_from_dict
from attnlab.data import Vocab, load_vocab
from attnlab.train.checkpoint import RunDir
from attnlab.train.experiment import experiment_config, run_experiment
from attnlab.train.loop import TrainResult
from attnlab.translation.loading import choose_checkpoint

from .config import LMRunConfig
from .corpus import VOCAB_NAME
from .model import LanguageModel, build_language_model
from .task import LanguageModelTask, model_signature

T = TypeVar("T")


def run_config(cls: type[T], path: str | None, run_dir: str | Path, overrides: Sequence[str],
               resume: bool) -> T:
    """The LM config `cls`: from `path`, or (resuming without one) from the run directory."""
    return experiment_config(cls, path, run_dir, overrides, resume)


def train_language_model(config: LMRunConfig, run_dir: str | Path, *, resume: bool = False,
                         progress: bool = True, log=print) -> TrainResult:
    """Build the task and train; the vocabulary, config and checkpoints go to `run_dir`."""
    return run_experiment(lambda log: LanguageModelTask(config, Path(run_dir), log=log), config,
                          run_dir, resume=resume, progress=progress, log=log)


@dataclass
class TrainedLanguageModel:
    """A run's model, its vocabulary and config, and which checkpoint was loaded."""

    model: LanguageModel  # in eval mode
    vocab: Vocab
    config: LMRunConfig
    checkpoint: str


def load_language_model(run_dir: str | Path, checkpoint: str | None = None,
                        device: str = "cpu") -> TrainedLanguageModel:
    """The model, vocabulary and config of a language-model run (CheckpointError if the
    checkpoint was trained as another model)."""
    directory = RunDir(run_dir)
    name = choose_checkpoint(directory, checkpoint)  # best if there is one, else last
    config = config_from_dict(directory.read_config(), LMRunConfig,
                              origin=str(directory.file("config.json")))
    vocab = load_vocab(directory.path, VOCAB_NAME)
    model = build_language_model(config.model, len(vocab), max_len=config.data.max_len + 1)
    directory.load_checkpoint(name, model, model_signature(config, vocab))
    return TrainedLanguageModel(model.to(device).eval(), vocab, config, name)
