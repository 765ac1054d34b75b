"""Every way to read links off a model, scored on a gold set: the argmax of its attention, of a
threshold on it, and of each attribution (attnlab.explain), beside the diagonal aligner, each
with its per-pair AER counts for the across-seed statistics of `attnlab compare`. Given a
model trained the other way (target to source), its attention's argmax too, and the two
directions joined as a statistical aligner's are (Och & Ney 2003; Koehn et al. 2003): their
intersection and grow-diag-final.

As for attention's AER (from_attention.py), the model reads the reference (forced decoding), and
each view is merged to the gold's units before its argmax: an attribution's magnitudes are
summed over a word's source pieces and averaged over its target pieces, as attention is
(labels.merge_subwords); "</s>" is left out on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from attnlab.data.vocab import EOS_ID
from attnlab.explain.attribution import METHODS, STEPS
from attnlab.explain.explanation import explain_pair
from attnlab.explain.methods import JOINED, REVERSE

from ..labels import label, sentence_pieces
from .aer import aer_counts, aer_from_counts
from .aligner import symmetrise
from .from_attention import (
    EOS,
    alignment_from_attention,
    alignment_weights,
    diagonal_links,
    gold_units,
)
from .golds import GoldSet
from .links import AlignmentSet, Link
from .protocol import AlignableRun

THRESHOLD = 0.3   # attention >= this links: a second link where a row is split between two


@dataclass
class ExtractionScores:
    """Per extraction ("attention", "attention >= 0.3", "gradient", ..., "diagonal"), the
    (|A∩S|, |A∩P|, |A|, |S|) counts of every pair scored; pairs left out because the model's
    units did not match the gold's."""

    gold: str
    unit: str
    counts: dict[str, list[list[int]]] = field(default_factory=dict)
    skipped: int = 0

    @property
    def pairs(self) -> int:
        return len(next(iter(self.counts.values()), []))

    def aer(self, extraction: str) -> float:
        return aer_from_counts(np.asarray(self.counts[extraction]))

    def to_dict(self) -> dict:
        return {"gold": self.gold, "unit": self.unit, "pairs": self.pairs,
                "skipped": self.skipped,
                "aer": {name: self.aer(name) for name in self.counts},
                "counts": self.counts}


def unit_views(run: AlignableRun, source: str, target: str, methods: Sequence[str],
               steps: int, characters: bool) -> dict[str, np.ndarray]:
    """Attention and each attribution of the forced reference, merged to units (words, or the
    characters of a character-level run), "</s>" left out: (T units, S units) each."""
    source_ids = run.vocabs.src.encode(source)
    target_ids = [i for i in run.vocabs.tgt.encode(target) if i != EOS_ID]
    source_pieces = sentence_pieces(run.vocabs.src, source)
    target_pieces = [*(run.vocabs.tgt.id_to_piece(i) for i in target_ids), EOS]
    found = explain_pair(run.model, source, source_ids, target, target_ids, source_pieces,
                         target_pieces, methods=methods, steps=steps)
    views = {}
    for name, values in found.views.items():
        magnitude = values if name == "attention" else np.abs(values)
        labelled = label(run.vocabs.src, run.vocabs.tgt, source_pieces, target_pieces,
                         magnitude)
        views[name] = alignment_weights(labelled, characters)
    return views


def extraction_scores(run: AlignableRun, gold: GoldSet, *, methods: Sequence[str] = METHODS,
                      steps: int = STEPS, limit: int | None = None,
                      reverse: AlignableRun | None = None,
                      tick: Callable[[int], None] | None = None) -> ExtractionScores:
    """AER counts of every extraction on the first `limit` pairs of `gold` (all when None);
    `reverse`: a model of the other direction (gold's target to its source), read as well."""
    characters = run.character_level
    scores = ExtractionScores(gold.name, "characters" if characters else "words")
    predicted: dict[str, list[set[Link]]] = {}
    kept: list[AlignmentSet] = []
    pairs = list(zip(gold.sources, gold.targets, gold.alignments, strict=True))[:limit]
    for source, target, links in pairs:
        views = unit_views(run, source, target, methods, steps, characters)
        units = gold_units(source, target, characters)
        backward = (None if reverse is None else
                    unit_views(reverse, target, source, [], steps, characters)["attention"])
        if next(iter(views.values())).shape != units or (
                backward is not None and backward.shape != units[::-1]):
            scores.skipped += 1  # a normalisation of the vocabulary merged or dropped a unit
        else:
            kept.append(links)
            for name, weights in views.items():
                predicted.setdefault(name, []).append(
                    alignment_from_attention(weights) if weights.size else set())
                if name == "attention":
                    predicted.setdefault(f"attention >= {THRESHOLD:g}", []).append(
                        alignment_from_attention(weights, "threshold", THRESHOLD))
            predicted.setdefault("diagonal", []).append(diagonal_links(*units))
            if backward is not None:
                for name, links_found in both_directions(views["attention"], backward).items():
                    predicted.setdefault(name, []).append(links_found)
        if tick is not None:
            tick(1)
    scores.counts = {name: aer_counts(links, kept).tolist() for name, links in predicted.items()}
    return scores


def both_directions(forward: np.ndarray, backward: np.ndarray) -> dict[str, set[Link]]:
    """The reverse model's argmax links and the two directions joined: forward (T, S)
    attention of the gold's target units over its source units, backward (S, T) the reverse
    model's; links are (source unit, target unit) as the gold's."""
    ahead = alignment_from_attention(forward) if forward.size else set()
    behind = {(j, i) for i, j in alignment_from_attention(backward)} if backward.size else set()
    return {REVERSE: behind,
            **{name: symmetrise(ahead, behind, method) for name, method in JOINED.items()}}
