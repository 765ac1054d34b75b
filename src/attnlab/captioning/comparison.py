"""A captioning run scored as a member of a comparison suite (attnlab compare)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnlab.models import count_parameters

from .evaluate import evaluate_split
from .run import CaptioningRun

# What a suite's claim may name (attnlab.compare.suite.checks): the record's BLEU-1..4 and the
# share of attention inside the named objects (localisation, on images with boxes); its other
# figures (chance level, counts) describe the test set rather than the model.
CLAIM_METRICS = ("bleu1", "bleu2", "bleu3", "bleu4", "localisation")


def comparison_scores(run_dir: Path, evaluate: Mapping[str, Any], example: str | None,
                      rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """A compare member's figures: BLEU-1..4 and localisation on the test split (beam from the
    run's config; `evaluate`'s limit). `example` and `rwth` are not used."""
    trained = CaptioningRun.load(run_dir)
    metrics, signature, images = evaluate_split(trained, limit=evaluate.get("limit"),
                                                progress=progress)
    return {"scores": {name: float(value) for name, value in metrics.items()},
            "signature": signature, "images": images,
            "parameters": count_parameters(trained.model), "checkpoint": "best"}


def findings(records: list[dict]) -> list[str]:
    """The report's sentences on a captioning suite's members."""
    lines = []
    for record in records:
        scores = record["scores"]
        local = scores.get("localisation")
        where = f", localisation {local:.1f}%" if local is not None else ""
        lines.append(f"{record['label']}: BLEU-4 {scores.get('bleu4', float('nan')):.2f}"
                     f"{where}.")
    return lines
