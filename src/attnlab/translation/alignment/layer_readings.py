"""The readings of a Transformer's every layer and head, by one rule: each reading of PER_VIEW,
built by the registry's own functions (readings.py), applied to each layer view that a pair has
(layer_views.py) and named "<reading> @ <view>":

    "attention @ L2"                   layer 2's head average, argmax
    "attention >= 0.3 @ L2H5"          head 5's weights above the threshold
    "attention, row t+1 @ L2H5"        head 5 read at the step whose input is the word
    "attention x value norm @ L2H5"    head 5's alpha ||f(h_j)|| (Kobayashi et al. 2020), argmax

    readings_of(views)     # the registry's readable readings, then every layer reading
    layer_place(name)      # {"reading": ..., "layer": 2, "head": 5}, None for another reading

The attributions, a reverse model and both directions joined are per model, not per layer: they
stay the registry's. A model without heads has no layer views, so no layer readings.
"""

from __future__ import annotations

from collections.abc import Callable

from .layer_views import norm_name, view_place
from .readings import (
    READINGS,
    THRESHOLD,
    Reading,
    Views,
    argmax_of,
    readable,
    rows_shifted,
    threshold_of,
)

# reading -> its Reading of one layer view (named as the registry names the same reading of
# "attention"); the registry's "attention, row t-1" is a labelling check, not read per layer
PER_VIEW: dict[str, Callable[[str], Reading]] = {
    "attention": argmax_of,
    f"attention >= {THRESHOLD:g}": threshold_of,
    "attention, row t+1": lambda view: rows_shifted(+1, view),
    "attention x value norm": lambda view: argmax_of(norm_name(view)),
}

AT = " @ "   # between a reading and its view


def layer_readings(views: Views) -> dict[str, Reading]:
    """Every reading of PER_VIEW of every layer view in `views` whose views are all there, in
    the views' order: "<reading> @ <view>" -> its Reading."""
    found = {}
    for view in views:
        if view_place(view) is None:
            continue
        for name, build in PER_VIEW.items():
            reading = build(view)
            if all(need in views for need in reading.needs):
                found[f"{name}{AT}{view}"] = reading
    return found


def readings_of(views: Views) -> dict[str, Reading]:
    """The registry's readings whose views are there (readings.readable), then the layer
    readings: name -> Reading."""
    return {name: READINGS[name] for name in readable(views)} | layer_readings(views)


def layer_place(name: str) -> dict[str, str | int | None] | None:
    """What a layer reading reads: {"reading": a key of PER_VIEW, "layer": 1-based, "head":
    1-based or None for the layer's head average}; None for a reading of the registry."""
    reading, at, view = name.rpartition(AT)
    place = view_place(view) if at else None
    if place is None or reading not in PER_VIEW:
        return None
    return {"reading": reading, "layer": place[0], "head": place[1]}
