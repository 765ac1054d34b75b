"""Every reading of links (readings.py: attention's argmax, a threshold on it, its rows
shifted, the norm-based reading, each attribution's argmax, a reverse model's and both
directions joined, the diagonal aligner) scored on a gold set, each with its per-pair AER
counts for the across-seed statistics of `attnlab compare`.

As for attention's AER (from_attention.py), the model reads the reference (forced decoding), and
each view is merged to the gold's units before its argmax: an attribution's magnitudes are
summed over a word's source pieces and averaged over its target pieces, as attention is
(labels.merge_subwords); "</s>" is left out on both sides. A Transformer's every layer and head
is read as well (layer_views.py, layer_readings.py: "attention, row t+1 @ L2H5"); the record
says what each of those reads ("layers").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from attnlab.explain.explanation import ForcedText, explain_pair
from attnlab.explain.methods import METHODS, STEPS

from ..labels import label
from .aer import aer_counts, aer_from_counts
from .from_attention import alignment_weights, end_row, gold_units
from .golds import GoldSet
from .layer_readings import layer_place, readings_of
from .layer_views import layer_views
from .links import AlignmentSet, Link
from .protocol import AlignableRun
from .readings import VERSION, end_view
from .value_norms import norm_weighted, value_norms


@dataclass
class ExtractionScores:
    """Per reading (readings.READINGS: "attention", "attention >= 0.3", "gradient", ...,
    "diagonal"), the (|A∩S|, |A∩P|, |A|, |S|) counts of every pair scored; pairs left out
    because the model's units did not match the gold's; integrated gradients' completeness gap
    (the worst row's, in nats) and points of every pair read, when they were computed."""

    gold: dict[str, str]   # the gold set's record (GoldSet.record)
    unit: str
    counts: dict[str, list[list[int]]] = field(default_factory=dict)
    skipped: int = 0
    gaps: list[float] = field(default_factory=list)
    points: list[int] = field(default_factory=list)

    @property
    def pairs(self) -> int:
        return len(next(iter(self.counts.values()), []))

    def aer(self, extraction: str) -> float:
        return aer_from_counts(np.asarray(self.counts[extraction]))

    def to_dict(self) -> dict:
        """JSON-ready; "layers": what each layer reading reads (layer_readings.layer_place),
        empty for a model without heads."""
        layers = {name: place for name in self.counts
                  if (place := layer_place(name)) is not None}
        return {"gold": self.gold, "unit": self.unit, "pairs": self.pairs,
                "skipped": self.skipped, "version": VERSION,
                "aer": {name: self.aer(name) for name in self.counts},
                "counts": self.counts, "layers": layers,
                "integrated_gradients": {"gap": self.gaps, "points": self.points}}


# Views read off the model beside attention and the attributions, each from the forced pair
# and its attention over pieces (T, S) (present whenever these are called): name -> (T, S).
DERIVED_VIEWS: dict[str, Callable[[AlignableRun, ForcedText, np.ndarray], np.ndarray]] = {
    "norm": lambda run, pair, attention: norm_weighted(
        attention, value_norms(run.model, pair.source_ids)),
}


def unit_views(run: AlignableRun, source: str, target: str, methods: Sequence[str],
               steps: int, characters: bool,
               scores: ExtractionScores | None = None) -> dict[str, np.ndarray]:
    """Attention, each attribution, each derived view and a Transformer's layer views
    (layer_views.py) of the forced reference, merged to units (words, or the characters of a
    character-level run), "</s>" left out: (T units, S units) each; integrated gradients' gap
    and points added to `scores` when given."""
    pair = ForcedText.of(run.vocabs.src, run.vocabs.tgt, source, target)
    explained = explain_pair(run.model, pair, methods=methods, steps=steps)
    if scores is not None and explained.gap is not None:
        scores.gaps.append(explained.gap)
        scores.points.append(explained.steps)
    found = dict(explained.views)
    if "attention" in found:
        found |= {name: view(run, pair, found["attention"]) for name, view in DERIVED_VIEWS.items()}
        found |= layer_views(run.model, pair)
    views = {}
    for name, values in found.items():
        magnitude = values if name == "attention" else np.abs(values)
        labelled = label(run.vocabs.src, run.vocabs.tgt, pair.source_pieces,
                         pair.target_pieces, magnitude)
        views[name] = alignment_weights(labelled, characters)
        if (after := end_row(labelled, characters)) is not None:
            views[end_view(name)] = after   # (1, S): the shifted reading's last row
    return views


def extraction_scores(run: AlignableRun, gold: GoldSet, *, methods: Sequence[str] = METHODS,
                      steps: int = STEPS, limit: int | None = None,
                      reverse: AlignableRun | None = None,
                      tick: Callable[[int], None] | None = None) -> ExtractionScores:
    """AER counts of every reading (readings.READINGS; a Transformer's layer readings too) on
    the first `limit` pairs of `gold` (all when None); `reverse`: a model of the other
    direction (gold's target to its source), read as well."""
    characters = run.character_level
    scores = ExtractionScores(gold.record, "characters" if characters else "words")
    predicted: dict[str, list[set[Link]]] = {}
    kept: list[AlignmentSet] = []
    pairs = list(zip(gold.sources, gold.targets, gold.alignments, strict=True))[:limit]
    for source, target, links in pairs:
        views = unit_views(run, source, target, methods, steps, characters, scores)
        if reverse is not None:
            views["reverse"] = unit_views(reverse, target, source, [], steps,
                                          characters)["attention"]
        units = gold_units(source, target, characters)
        if not _in_units(views, units):
            scores.skipped += 1  # a normalisation of the vocabulary merged or dropped a unit
        else:
            kept.append(links)
            for name, reading in readings_of(views).items():
                predicted.setdefault(name, []).append(reading.links(views, units))
        if tick is not None:
            tick(1)
    scores.counts = {name: aer_counts(links, kept).tolist() for name, links in predicted.items()}
    return scores


def _in_units(views: dict[str, np.ndarray], units: tuple[int, int]) -> bool:
    """Whether every view is over the gold's units (the reverse model's turned round, a
    "</s>" row over the source units)."""
    ends = {end_view(name) for name in views}
    return all(view.shape == ((1, units[1]) if name in ends else
                              units[::-1] if name == "reverse" else units)
               for name, view in views.items())
