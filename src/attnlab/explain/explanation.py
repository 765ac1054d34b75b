"""Attention beside the attributions of one translation: what `run.explain(sentence)` returns.

    found = run.explain("Zwei Männer spielen Fußball .")
    found.views["attention"], found.views["integrated_gradients"]   # (T, S) each
    found.links("erasure")          # argmax source piece of every target piece
    found.to_dict()                 # what `attnlab explain --format json` prints
    found.save_png("explain.png")   # one panel per view
    found                           # in Jupyter: the explorer's view, a switch between views

Every view is over the model's pieces (characters for a character model), rows the target
pieces with EOS last, columns the source pieces with EOS last: attention's own shape.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.models import Seq2Seq
from attnlab.viz.notebook import View, explanation_view

from .attribution import (
    METHODS,
    STEPS,
    ForcedPair,
    attribute,
    forced_pass,
)


@dataclass
class Explanation:
    """source_pieces / target_pieces ("</s>" last on both); text: the output explained;
    views: "attention" (absent for a model without it) and each attribution method, (T, S)
    float arrays; steps: integrated gradients' points; baseline: what the attributions start
    from."""

    source: str
    text: str
    source_pieces: list[str]
    target_pieces: list[str]
    views: dict[str, np.ndarray]
    steps: int = STEPS
    baseline: str = "every source embedding zero (the padding's), the mask unchanged"
    log_probs: list[float] = field(default_factory=list)  # log p(y_t | y_<t, x) per row

    def links(self, view: str) -> list[tuple[int, int]]:
        """(source piece, target piece) for every target piece: the source piece with the
        largest weight (attention) or largest magnitude (an attribution) in its row."""
        rows = np.abs(self.views[view])
        return [(int(row.argmax()), target) for target, row in enumerate(rows)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (every number finite: a NaN of a diverged model becomes null)."""
        return {"source": self.source, "text": self.text,
                "source_pieces": self.source_pieces, "target_pieces": self.target_pieces,
                "log_probs": [_finite(x) for x in self.log_probs],
                "integrated_gradients_steps": self.steps, "baseline": self.baseline,
                "views": {name: [[_finite(x) for x in row] for row in values.tolist()]
                          for name, values in self.views.items()}}

    def save_png(self, path: str | os.PathLike, views: Sequence[str] | None = None) -> None:
        """One heatmap per view side by side (attnlab.explain.figure)."""
        from .figure import explanation_figure

        explanation_figure(self, list(views or self.views), path)

    def _view(self) -> View:
        """The explorer's translation view of this output with a switch between attention and
        each attribution (attnlab.viz.notebook): what a notebook draws, what attnlab.show
        shows."""
        return explanation_view(self.source_pieces, self.target_pieces, self.text, self.views,
                                source=self.source, log_probs=self.log_probs)

    def _repr_html_(self) -> str:
        return self._view()._repr_html_()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        return self._view()._repr_mimebundle_(include, exclude)

    def save_html(self, path: str | os.PathLike) -> Path:
        """The notebook's interactive view as a page of its own (nothing fetched)."""
        return self._view().save_html(path)


def explain_pair(model: Seq2Seq, source: str, source_ids: Sequence[int], text: str,
                 target_ids: Sequence[int], source_pieces: list[str], target_pieces: list[str],
                 *, methods: Sequence[str] = METHODS, steps: int = STEPS) -> Explanation:
    """Attention and each of `methods` for the forced pair (target ids without EOS)."""
    device = next(model.parameters()).device
    pair = ForcedPair.of(source_ids, target_ids, device)
    views: dict[str, np.ndarray] = {}
    attention, log_probs = forced_pass(model, pair)
    if attention is not None:
        views["attention"] = attention
    for method in methods:
        views[method] = attribute(model, pair, method, steps=steps)
    return Explanation(source, text, source_pieces, target_pieces, views, steps,
                       log_probs=log_probs)


def method_names(methods: Sequence[str]) -> list[str]:
    """`methods` checked, in the order given, each once: ValueError naming an unknown one."""
    unknown = [name for name in methods if name not in METHODS]
    if unknown:
        raise ValueError(f"unknown attribution method {unknown[0]!r}: choose from "
                         f"{', '.join(METHODS)}")
    return list(dict.fromkeys(methods))


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None
