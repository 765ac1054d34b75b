"""A Transformer's alignment layer by layer and head by head, across seeds, from the layer
readings its explanation records hold: record["extractions"]["layers"] says what each reads,
{"attention, row t+1 @ L2H5": {"reading": "attention, row t+1", "layer": 2, "head": 5}, ...}
(head None: the layer's head average). Numbers only; the report words them
(attnlab.compare.report.layer_alignment).

    places(member)                       # name -> {"reading", "layer", "head"}; {} for an RNN
    aer_across_seeds(stats)              # the mean AER over the seeds with its 95% interval
    best_heads(member, "attention")      # per seed, the head with the lowest AER
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .across_seeds import SeedComparison, aer_scorer, compare_across_seeds, seed_scores
from .explanations import SEED, Explained, extraction_stats
from .verdicts import SAMPLES

Place = dict   # {"reading": str, "layer": int, "head": int | None}


def places(member: Explained) -> dict[str, Place]:
    """The layer readings every one of the member's records holds, in the records' order."""
    found = [record.get("extractions", {}).get("layers") or {} for record in member.records]
    if not found:
        return {}
    return {name: place for name, place in found[0].items()
            if all(name in other for other in found[1:])}


def layer_kinds(members: list[Explained]) -> list[str]:
    """The readings applied per layer in any member's records, in first-seen order."""
    kinds: dict[str, None] = {}
    for member in members:
        kinds.update(dict.fromkeys(place["reading"] for place in places(member).values()))
    return list(kinds)


def layer_name(member: Explained, reading: str, layer: int,
               head: int | None = None) -> str | None:
    """The name of `reading` of one layer (head None: its heads' average) or head, if held."""
    return next((name for name, place in places(member).items()
                 if (place["reading"], place["layer"], place["head"]) == (reading, layer, head)),
                None)


def layer_count(member: Explained) -> int:
    return max((place["layer"] for place in places(member).values()), default=0)


def aer_across_seeds(stats: np.ndarray) -> SeedComparison:
    """A reading's mean AER over the seeds (stats: (seeds, pairs, 4) AER counts) with its
    interval: the test against a perfect aligner on the same pairs (AER 0 on every resample),
    so the interval holds the seeds' spread and the pairs' sampling noise, as every test of
    the report (across_seeds.compare_across_seeds); undecided under three seeds."""
    perfect = np.ones_like(stats, dtype=float)   # |A&S| = |A&P| = |A| = |S|: AER 0
    return compare_across_seeds(stats, perfect, aer_scorer, samples=SAMPLES, seed=SEED)


def seed_aers(member: Explained, name: str) -> np.ndarray | None:
    """The AER of one reading in every seed (seeds,), None where a record lacks it."""
    stats = extraction_stats(member, name)
    return None if stats is None else seed_scores(stats, aer_scorer)


@dataclass(frozen=True)
class Best:
    """The view with the lowest AER under one reading: its name, its place, its AER (one
    single run's, or the mean over the seeds)."""

    name: str
    layer: int
    head: int | None
    aer: float

    @property
    def view(self) -> str:
        """"L2H5", or "L2" for a layer's head average."""
        return f"L{self.layer}" + ("" if self.head is None else f"H{self.head}")


def best_view(member: Explained, reading: str, *, heads: bool,
              seed: int | None = None) -> Best | None:
    """Under `reading`, the head (heads=True) or the layer average with the lowest AER: in
    seed `seed` (0-based), or by the mean over the seeds when None; None without layers."""
    found = []
    for name, place in places(member).items():
        if place["reading"] != reading or (place["head"] is not None) != heads:
            continue
        scores = seed_aers(member, name)
        if scores is None:
            continue
        value = float(scores.mean() if seed is None else scores[seed])
        found.append(Best(name, place["layer"], place["head"], value))
    # ties go to the lowest layer and head, so that the choice never rests on dict order
    return min(found, key=lambda best: (best.aer, best.layer, best.head or 0), default=None)


def best_heads(member: Explained, reading: str) -> list[Best]:
    """Per seed, in seed order, the head with the lowest AER under `reading`."""
    found = [best_view(member, reading, heads=True, seed=seed)
             for seed in range(len(member.records))]
    return [best for best in found if best is not None]


def same_in_every_seed(bests: list[Best]) -> bool:
    """Whether every seed chose the same view (one seed: trivially, and the report says so)."""
    return len({best.view for best in bests}) == 1
