"""Every way attnlab reads links off a model, one registry line each.

A reading turns a pair's views into links. The views are (T, S) matrices over the gold's units
(target units down, source units along; "</s>" left out), each merged to units as attention is
(labels.merge_subwords): "attention"; each attribution ("gradient", "integrated_gradients",
"erasure", attnlab.explain); "norm", attention weighted by the norm of what each source position
contributes (value_norms.py; extractions.DERIVED_VIEWS); and "reverse", a model trained the
other way, (S, T). Beside a view, its "</s>" row over the source units, (1, S) (end_view): row
t+1 of the last unit, which the shifted reading reads. A reading whose views a pair lacks is not
read (no attribution asked, no reverse model, no attention). A Transformer's layers and heads
add views of their own, each read by the readings of one attention view (layer_readings.py:
"attention, row t+1 @ L2H5").

    READINGS["attention"].links(views, (T, S))      # {(source unit, target unit)}
    readable(views)                                 # the names whose views are all there

Adding a reading is its function and one line of READINGS (and its docs and tests): the
explanation records store the names they hold, compare's report iterates the record, and
VERSION, which the records carry, makes the records of older code be made again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from attnlab.explain.methods import JOINED, REVERSE

from .aligner import symmetrise
from .from_attention import alignment_from_attention, diagonal_links
from .links import Link

# Bump when a reading's code changes what it returns: explanation records of another version
# are made again (attnlab.compare.run.explain_records).
VERSION = 4

THRESHOLD = 0.3   # attention >= this links: a second link where a row is split between two

Views = Mapping[str, np.ndarray]
Units = tuple[int, int]   # (target units T, source units S)


@dataclass(frozen=True)
class Reading:
    """needs: the views it reads; links(views, units) -> {(source unit, target unit)}."""

    needs: tuple[str, ...]
    links: Callable[[Views, Units], set[Link]]


def argmax_of(view: str) -> Reading:
    """Each target unit to the source unit of largest magnitude in its row (Luong et al. 2015,
    sec. 5.4, for attention; the same for an attribution's magnitude)."""
    return Reading((view,), lambda views, _: _argmax(np.abs(views[view])))


def end_view(view: str) -> str:
    """The view of `view`'s "</s>" row over the source units (1, S), where a pair has it: the
    step after the last unit, whose decoder input that unit is."""
    return f"{view}, </s> row"


def rows_shifted(shift: int, view: str = "attention") -> Reading:
    """Target unit t given the argmax links of row t + shift of `view`. Row t + 1 is the step
    whose decoder input is unit t (Chen et al. 2020's shifted reading: where the word is read,
    not written), the last unit's the "</s>" row (end_view) where the views hold it; row t - 1
    a check the other way (with the rows right, row t reads best)."""
    def read(views: Views, units: Units) -> set[Link]:
        weights = views[view]
        after = views.get(end_view(view))
        if shift > 0 and after is not None:
            weights = np.vstack([weights, after])   # (T + 1, S): row T is "</s>"'s
        links = _argmax(weights)
        return {(i, t - shift) for i, t in links if 0 <= t - shift < units[0]}
    return Reading((view,), read)


def threshold_of(view: str) -> Reading:
    """Every pair whose weight in `view` is >= THRESHOLD."""
    def read(views: Views, _: Units) -> set[Link]:
        weights = views[view]
        return (alignment_from_attention(weights, "threshold", THRESHOLD) if weights.size
                else set())
    return Reading((view,), read)


def reverse(views: Views, _: Units) -> set[Link]:
    """The reverse model's argmax links (its rows are the gold's source units), turned round."""
    return {(j, i) for i, j in _argmax(views["reverse"])}


def joined(method: str) -> Reading:
    """Both directions joined as a statistical aligner's are (Och & Ney 2003; Koehn et al.
    2003; attnlab.translation.alignment.aligner.symmetrise)."""
    return Reading(("attention", "reverse"), lambda views, units: symmetrise(
        _argmax(views["attention"]), reverse(views, units), method))


def diagonal(_: Views, units: Units) -> set[Link]:
    """The trivial aligner beside every reading: unit t to the source unit at its relative
    position."""
    return diagonal_links(*units)


READINGS: dict[str, Reading] = {
    "attention": argmax_of("attention"),
    f"attention >= {THRESHOLD:g}": threshold_of("attention"),
    "attention, row t-1": rows_shifted(-1),
    "attention, row t+1": rows_shifted(+1),
    "attention x value norm": argmax_of("norm"),
    "gradient": argmax_of("gradient"),
    "integrated_gradients": argmax_of("integrated_gradients"),
    "erasure": argmax_of("erasure"),
    REVERSE: Reading(("reverse",), reverse),
    **{name: joined(method) for name, method in JOINED.items()},
    "diagonal": Reading((), diagonal),
}


def readable(views: Views) -> list[str]:
    """The readings whose views are all in `views`, in the registry's order."""
    return [name for name, reading in READINGS.items()
            if all(view in views for view in reading.needs)]


def _argmax(weights: np.ndarray) -> set[Link]:
    return alignment_from_attention(weights) if weights.size else set()
