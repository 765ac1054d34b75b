"""The LSTMN reading figure of a language-model run (Cheng et al. 2016, Fig. 1) and its weight
matrix. (A translation run with an LSTMN encoder is read by attnlab.translation.reading.)"""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import writing
from attnlab.viz import SentenceReading, plot_reading

from .loading import load_language_model
from .reading import read_with_language_model


def read_run(run_dir: str | os.PathLike, sentence: str, checkpoint: str | None = None,
             device: str = "cpu") -> SentenceReading:
    """How a language-model run's LSTMN reads `sentence` (the model on `device`)."""
    trained = load_language_model(run_dir, checkpoint, device)
    return read_with_language_model(trained.model, trained.vocab, sentence)


def plot_run_self_attention(run_dir: str | os.PathLike, sentence: str, *,
                            output: str | os.PathLike | None = None,
                            matrix: str | os.PathLike | None = None, layer: int = -1,
                            checkpoint: str | None = None) -> tuple[Path, Path]:
    """The reading figure and weight matrix (attnlab.viz.plot_reading) of a language-model
    run reading `sentence`. Defaults: <run>/self-attention.png and -matrix.png."""
    return plot_reading_to(read_run(run_dir, sentence, checkpoint), run_dir, output, matrix,
                           layer)


def plot_reading_to(reading: SentenceReading, run_dir: str | os.PathLike,
                    output: str | os.PathLike | None, matrix: str | os.PathLike | None,
                    layer: int) -> tuple[Path, Path]:
    """plot_reading with the run's default paths and a one-sentence error for a bad layer."""
    layers = reading.weights.shape[0]
    if not -layers <= layer < layers:
        raise UserError(f"--layer {layer}: the model has {layers} layer(s)")
    output = Path(output) if output is not None else Path(run_dir) / "self-attention.png"
    with writing(output):
        return plot_reading(reading, output, matrix, layer)
