"""Load a trained language model back from its run directory."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from attnlab.data import Vocab, load_vocab
from attnlab.models import LanguageModel, build_language_model
from attnlab.train.runs import load_weights, open_run

from .config import LMRunConfig
from .corpus import VOCAB_NAME
from .task import TASK, model_signature


@dataclass
class TrainedLanguageModel:
    """A run's model, its vocabulary and config, and which checkpoint was loaded."""

    model: LanguageModel  # in eval mode
    vocab: Vocab
    config: LMRunConfig
    checkpoint: str


def load_language_model(run_dir: str | os.PathLike, checkpoint: str | None = None,
                        device: str | torch.device = "cpu") -> TrainedLanguageModel:
    """The model, vocabulary and config of a language-model run (`checkpoint`: best, last, or
    None for best-else-last; CheckpointError if it was trained as another model)."""
    run = open_run(run_dir, LMRunConfig, checkpoint, task=TASK)
    vocab = load_vocab(run.path, VOCAB_NAME)
    model = build_language_model(run.config.model, len(vocab),
                                 max_len=run.config.data.max_len + 1)
    load_weights(run, model, model_signature(run.config, vocab), device)
    return TrainedLanguageModel(model, vocab, run.config, run.checkpoint)
