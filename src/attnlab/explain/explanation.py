"""Attention beside the attributions of one translation: what `run.explain(sentence)` returns.

    found = run.explain("Zwei Männer spielen Fußball .")
    found.views["attention"], found.views["integrated_gradients"]   # (T, S) each
    found.links("erasure")          # argmax source piece of every target piece
    found.to_dict()                 # what `attnlab explain --format json` prints
    found.save_png("explain.png")   # one panel per view (attnlab.viz.panels)
    found                           # in Jupyter: the explorer's view, a switch between views

Every view is over the model's pieces (characters for a character model), rows the target
pieces with EOS last, columns the source pieces with EOS last: attention's own shape.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from attnlab.data.vocab import EOS_ID, Vocab
from attnlab.errors import UserError
from attnlab.files import atomic_output
from attnlab.models import Seq2Seq
from attnlab.viz import panel_grid
from attnlab.viz.notebook import Displayed, View, explanation_view

from .attribution import ForcedPair, attribution, forced_pass
from .methods import LABELS, METHODS, STEPS, TOLERANCE

EOS = "</s>"  # the piece batching appends to a source and that ends a target


@dataclass(frozen=True)
class ForcedText:
    """One forced pair as text, ids and pieces: the source and the output explained (`text`),
    their ids (without EOS) and pieces (EOS last)."""

    source: str
    source_ids: list[int]
    text: str
    target_ids: list[int]
    source_pieces: list[str]
    target_pieces: list[str]

    @classmethod
    def of(cls, src: Vocab, tgt: Vocab, source: str, text: str,
           target_ids: Sequence[int] | None = None) -> ForcedText:
        """From a run's vocabularies: `target_ids` the model's own output's, else `text`'s."""
        ids = [i for i in (tgt.encode(text) if target_ids is None else target_ids)
               if i != EOS_ID]
        return cls(source, src.encode(source), text, ids, [*src.tokenize(source), EOS],
                   [*(tgt.id_to_piece(i) for i in ids), EOS])


@dataclass(repr=False)
class Explanation(Displayed):
    """source_pieces / target_pieces ("</s>" last on both); text: the output explained;
    views: "attention" (absent for a model without it) and each attribution method, (T, S)
    float arrays; baseline: what the attributions start from. Integrated gradients' steps:
    the points they ended with (asked for, when they were not computed); gap: their
    completeness gap, the worst row's |sum of the row - (log p(y_t | x) - log p(y_t |
    baseline))| in nats (None when not computed); tolerance: the gap they were asked to meet
    (None: a fixed rule of `steps` points); capped: they stopped at the cap short of it;
    stepped: log p steps along their path, where no rule meets it (local-p's window moving,
    hard attention's argmax switching): the gap holds the steps."""

    source: str
    text: str
    source_pieces: list[str]
    target_pieces: list[str]
    views: dict[str, np.ndarray]
    steps: int = STEPS
    baseline: str = "every source embedding zero (the padding's), the mask unchanged"
    log_probs: list[float] = field(default_factory=list)  # log p(y_t | y_<t, x) per row
    gap: float | None = None
    tolerance: float | None = TOLERANCE
    capped: bool = False
    stepped: bool = False

    def view_named(self, name: str) -> str:
        """The key of the view called `name` (its key or its label, LABELS), else UserError."""
        keys = {LABELS.get(key, key): key for key in self.views} | {key: key for key in self.views}
        if name in keys:
            return keys[name]
        close = difflib.get_close_matches(name, list(keys), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UserError(f"no view {name!r}: this explanation has "
                        f"{', '.join(self.views)}{hint}")

    def links(self, view: str) -> list[tuple[int, int]]:
        """(source piece, target piece) for every target piece: the source piece with the
        largest weight (attention) or largest magnitude (an attribution) in its row. `view`
        by its key ("gradient") or the figure's name ("gradient x input"); a UserError with
        the views it has otherwise."""
        rows = np.abs(self.views[self.view_named(view)])
        return [(int(row.argmax()), target) for target, row in enumerate(rows)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (every number finite: a NaN of a diverged model becomes null)."""
        return {"source": self.source, "text": self.text,
                "source_pieces": self.source_pieces, "target_pieces": self.target_pieces,
                "log_probs": [_finite(x) for x in self.log_probs],
                "integrated_gradients_steps": self.steps,
                "integrated_gradients_gap": None if self.gap is None else _finite(self.gap),
                "integrated_gradients_tolerance": self.tolerance,
                "integrated_gradients_capped": self.capped,
                "integrated_gradients_stepped": self.stepped, "baseline": self.baseline,
                "views": {name: [[_finite(x) for x in row] for row in values.tolist()]
                          for name, values in self.views.items()}}

    def save_png(self, path: str | os.PathLike, scale: float = 1.0, *,
                 views: Sequence[str] | None = None) -> Path:
        """One heatmap per view in a grid, one colour bar (attnlab.viz.panels), atomically;
        `scale` times the heatmaps' resolution."""
        chosen = [self.view_named(view) for view in views or self.views]
        shown = {LABELS[view]: self.views[view] for view in chosen}
        canvas = panel_grid(shown, self.target_pieces, self.source_pieces,
                                     weights=(LABELS["attention"],), scale=scale)
        with atomic_output(path, "wb") as file:
            Image.fromarray(canvas).save(file, format="PNG")
        return Path(path)

    def _view(self) -> View:
        """The explorer's translation view of this output with a switch between attention and
        each attribution (attnlab.viz.notebook): what a notebook draws, what attnlab.show
        shows."""
        return explanation_view(self.source_pieces, self.target_pieces, self.text, self.views,
                                source=self.source, log_probs=self.log_probs)


def explain_pair(model: Seq2Seq, pair: ForcedText, *, methods: Sequence[str] = METHODS,
                 steps: int = STEPS, tolerance: float | None = TOLERANCE) -> Explanation:
    """Attention and each of `methods` for the forced pair; integrated gradients from `steps`
    points to a completeness gap of `tolerance` nats (None: one rule of `steps` points)."""
    device = next(model.parameters()).device
    forced = ForcedPair.of(pair.source_ids, pair.target_ids, device)
    views: dict[str, np.ndarray] = {}
    attention, log_probs = forced_pass(model, forced)
    if attention is not None:
        views["attention"] = attention
    integrated = None
    for method in methods:
        found = attribution(model, forced, method, steps=steps, tolerance=tolerance)
        views[method] = found.values
        integrated = found if method == "integrated_gradients" else integrated
    if integrated is None:
        return Explanation(pair.source, pair.text, pair.source_pieces, pair.target_pieces,
                           views, steps, log_probs=log_probs, tolerance=tolerance)
    return Explanation(pair.source, pair.text, pair.source_pieces, pair.target_pieces, views,
                       integrated.steps or steps, log_probs=log_probs, gap=integrated.gap,
                       tolerance=tolerance, capped=integrated.capped,
                       stepped=integrated.stepped)


def method_names(methods: Sequence[str]) -> list[str]:
    """`methods` checked, in the order given, each once: ValueError naming an unknown one."""
    unknown = [name for name in methods if name not in METHODS]
    if unknown:
        raise ValueError(f"unknown attribution method {unknown[0]!r}: choose from "
                         f"{', '.join(METHODS)}")
    return list(dict.fromkeys(methods))


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None
