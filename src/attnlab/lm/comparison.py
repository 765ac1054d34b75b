"""A language-model run scored as a member of a comparison suite (attnlab compare)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.models import count_parameters

from .evaluate import evaluate_perplexity
from .figure import read_run
from .loading import load_language_model


def comparison_scores(run_dir: Path, evaluate: Mapping[str, Any], example: str | None,
                      rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """A compare member's figures: test perplexity (and the best validation perplexity); the
    example sentence's self-attention (LSTMN runs). `evaluate` and `rwth` are not used."""
    result = evaluate_perplexity(run_dir, progress=progress)
    trained = load_language_model(run_dir, result.checkpoint)
    shown = None
    if example and trained.config.model.kind == "lstmn":
        reading = read_run(run_dir, example)
        shown = {"source": example, "tokens": list(reading.tokens),
                 "weights": np.asarray(reading.weights[-1]).round(4).tolist()}   # last layer
    return {"scores": {"perplexity": result.perplexity}, "parameters": count_parameters(
        trained.model), "checkpoint": result.checkpoint, "example": shown,
            "details": asdict(result)}
