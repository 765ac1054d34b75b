"""The LSTMN reading figure of a language-model run (Cheng et al. 2016, Fig. 1) and its weight
matrix, into a run's folder. (LanguageModelRun.plot; a translation run with an LSTMN encoder
is read by attnlab.translation.reading.)"""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import writing
from attnlab.viz import SentenceReading, plot_reading


def plot_reading_to(reading: SentenceReading, run_dir: str | os.PathLike,
                    output: str | os.PathLike | None, matrix: str | os.PathLike | None,
                    layer: int | None) -> tuple[Path, Path]:
    """plot_reading of `layer` (counted from 1, as a Transformer's layers are; None: the top
    one) with the run's default paths and a one-sentence error for a bad layer."""
    layers = reading.weights.shape[0]
    if layer is not None and not 1 <= layer <= layers:
        raise UserError(f"--layer {layer} is out of range: this model has {layers} "
                        f"layer{'s' if layers > 1 else ''}, 1 to {layers}")
    output = Path(output) if output is not None else Path(run_dir) / "self-attention.png"
    with writing(output):
        return plot_reading(reading, output, matrix, -1 if layer is None else layer - 1)
