"""The LSTMN reading figure of a trained run (Cheng et al. 2016, Fig. 1) and its weight matrix.

A run directory is either a language model (`attnlab lm train`) or a translation model with an
LSTMN encoder (`model.encoder.kind: lstmn`); the checkpoint's signature says which.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.errors import UserError
from attnlab.train.checkpoint import RunDir
from attnlab.translation.loading import choose_checkpoint, load_run
from attnlab.viz import plot_self_attention, plot_weight_matrix

from .reading import SentenceReading, read_with_encoder, read_with_language_model
from .run import load_language_model


def read_run(run_dir: str | os.PathLike, sentence: str,
             checkpoint: str | None = None) -> SentenceReading:
    """How the run's LSTMN (language model or translation encoder) reads `sentence`."""
    directory = RunDir(run_dir)
    name = choose_checkpoint(directory, checkpoint)
    task = directory.read_meta(name).get("signature", {}).get("task")
    if task == "language_model":
        trained = load_language_model(directory.path, name)
        return read_with_language_model(trained.model, trained.vocab, sentence)
    if task == "translation":
        run = load_run(directory.path, name)
        return read_with_encoder(run.model, run.vocabs.src, sentence)
    raise UserError(f"{directory.path} holds a {task!r} model; expected a language model or a "
                    f"translation model with an LSTMN encoder")


def plot_run_self_attention(run_dir: str | os.PathLike, sentence: str, *,
                            output: str | os.PathLike | None = None,
                            matrix: str | os.PathLike | None = None, layer: int = -1,
                            checkpoint: str | None = None) -> tuple[Path, Path]:
    """Write the reading figure (one line per step; current word red, earlier words shaded by
    weight) and the step x step weight matrix of layer `layer` (default: the top one).

    Defaults: <run>/self-attention.png and <run>/self-attention-matrix.png. Returns both paths.
    """
    reading = read_run(run_dir, sentence, checkpoint)
    layers = reading.weights.shape[0]
    if not -layers <= layer < layers:
        raise UserError(f"--layer {layer}: the model has {layers} layer(s)")
    weights = reading.weights[layer]  # (T, T)
    output = Path(output) if output is not None else Path(run_dir) / "self-attention.png"
    matrix = Path(matrix) if matrix is not None else output.with_name(
        f"{output.stem}-matrix{output.suffix}")
    plot_self_attention(reading.tokens, weights, output)
    plot_weight_matrix(weights, reading.tokens, reading.tokens, matrix,
                       title="step (row) attends to earlier position (column)")
    return output, matrix
