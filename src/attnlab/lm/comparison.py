"""A language-model run scored as a member of a comparison suite (attnlab compare)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.models import count_parameters

from .run import LanguageModelRun


def comparison_scores(run_dir: Path, evaluate: Mapping[str, Any], example: str | None,
                      rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """A compare member's figures: test perplexity (and the best validation perplexity); the
    example sentence's self-attention (LSTMN runs). `evaluate` and `rwth` are not used."""
    trained = LanguageModelRun.load(run_dir)
    result = trained.evaluate(progress=progress)
    shown = None
    if example and trained.reads_with_attention:
        reading = trained.read(example)
        shown = {"source": example, "tokens": list(reading.tokens),
                 "weights": np.asarray(reading.weights[-1]).round(4).tolist()}   # last layer
    return {"scores": {"perplexity": result.perplexity}, "parameters": count_parameters(
        trained.model), "checkpoint": result.checkpoint, "example": shown,
            "details": asdict(result)}


def findings(records: list[dict]) -> list[str]:
    """The report's sentences on a language-model suite's members."""
    lines = []
    for record in records:
        lines.append(f"{record['label']}: test perplexity {record['scores']['perplexity']:.2f} "
                     f"after {record['updates']:,} updates in {record['minutes']:.1f} minutes "
                     f"({record.get('parameters', 0):,} parameters).")
    best = min(records, key=lambda r: r["scores"]["perplexity"])
    lines.append(f"Lowest perplexity: {best['label']}.")
    return lines
