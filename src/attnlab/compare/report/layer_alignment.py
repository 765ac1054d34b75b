"""The explanation page's alignment of a Transformer layer by layer (attnlab.compare.stats.layers):
"AER per layer", each layer's head average and the best head under each reading, across seeds,
beside the recurrent members' attention, the diagonal aligner and eflomal; and the best layer
and head of each seed, and whether the seeds agree. No block for a suite without layers."""

from __future__ import annotations

from ..stats.across_seeds import aer_scorer
from ..stats.explanations import Explained, extraction_stats
from ..stats.layers import (
    Best,
    aer_across_seeds,
    best_heads,
    best_view,
    layer_count,
    layer_kinds,
    layer_name,
    places,
    same_in_every_seed,
)
from .controls import Block

# A reading's column, by the registry's name of it (any other is shown by its name)
COLUMNS = {"attention": "argmax", "attention >= 0.3": "threshold (>= 0.3)",
           "attention, row t+1": "shifted (row t+1)",
           "attention x value norm": "norm-based"}


def _column(kind: str) -> str:
    return COLUMNS.get(kind, kind)


def aer_cell(member: Explained, name: str | None) -> str:
    """"0.312 (0.290 to 0.334)": the mean AER over the seeds and its 95% interval, or
    "0.312 (< 3 seeds)"; "-" where the records lack the reading."""
    stats = None if name is None else extraction_stats(member, name)
    if stats is None:
        return "-"
    comparison = aer_across_seeds(stats)
    interval = comparison.interval()
    if interval is None:
        return f"{comparison.mean_a:.3f} (< 3 seeds)"
    return f"{comparison.mean_a:.3f} ({interval[0]:.3f} to {interval[1]:.3f})"


def layer_rows(members: list[Explained], eflomal: dict | None) -> list[list[str]]:
    """Per Transformer member, a row per layer (its heads' average) and one for its best head
    (named) under each reading; then each other member's attention under the same readings,
    the diagonal aligner and eflomal (one aligner each: their AER in the first column). No
    rows when no member has layers."""
    layered = [member for member in members if places(member)]
    if not layered:
        return []
    kinds = layer_kinds(layered)
    rows = [["member", "layer", "seeds", *(_column(kind) for kind in kinds)]]
    for member in layered:
        seeds = str(len(member.records))
        for layer in range(1, layer_count(member) + 1):
            rows.append([member.label, str(layer), seeds,
                         *(aer_cell(member, layer_name(member, kind, layer)) for kind in kinds)])
        rows.append([member.label, "best head", seeds, *(_best_cell(member, kind)
                                                         for kind in kinds)])
    for member in members:
        if not places(member):
            rows.append([member.label, "attention", str(len(member.records)),
                         *(aer_cell(member, kind) for kind in kinds)])
    blank = ["-"] * (len(kinds) - 1)
    diagonal = next((stats for member in members
                     if (stats := extraction_stats(member, "diagonal")) is not None), None)
    if diagonal is not None:
        rows.append(["diagonal aligner", "-", "-",
                     f"{float(aer_scorer(diagonal[0].sum(axis=0))):.3f}", *blank])
    if eflomal and eflomal.get("aer") is not None:
        rows.append([eflomal["label"], "-", "-", f"{eflomal['aer']:.3f}", *blank])
    return rows


def _best_cell(member: Explained, kind: str) -> str:
    """"L2H3: 0.312 (0.290 to 0.334)": the head of lowest mean AER over the seeds."""
    best = best_view(member, kind, heads=True)
    return "-" if best is None else f"{best.view}: {aer_cell(member, best.name)}"


def seed_rows(members: list[Explained]) -> list[list[str]]:
    """Per Transformer member and reading, the best head of every seed (its AER) and best layer,
    and whether every seed chose the same head."""
    layered = [member for member in members if places(member)]
    if not layered:
        return []
    kinds = layer_kinds(layered)
    width = max(len(member.records) for member in layered)
    rows = [["member", "reading", *(f"seed {k}" for k in range(1, width + 1)),
             "the same head in every seed"]]
    for member in layered:
        for kind in kinds:
            heads = best_heads(member, kind)
            if not heads:
                continue
            layers = [best_view(member, kind, heads=False, seed=seed)
                      for seed in range(len(member.records))]
            cells = [f"{head.view} {head.aer:.3f}; layer {layer.layer if layer else '-'}"
                     for head, layer in zip(heads, layers, strict=True)]
            rows.append([member.label, _column(kind), *cells,
                         *["-"] * (width - len(cells)), _agreement(heads)])
    return rows


def _agreement(heads: list[Best]) -> str:
    if len(heads) == 1:
        return "one seed"
    if same_in_every_seed(heads):
        return f"yes: {heads[0].view}"
    return f"no: {_chosen(heads)}"


def _chosen(heads: list[Best]) -> str:
    """"L2H3 in seeds 1, 2; L1H2 in seed 3"."""
    seeds: dict[str, list[str]] = {}
    for seed, head in enumerate(heads, start=1):
        seeds.setdefault(head.view, []).append(str(seed))
    return "; ".join(f"{view} in seed{'s' if len(found) > 1 else ''} {', '.join(found)}"
                     for view, found in seeds.items())


def best_lines(members: list[Explained]) -> list[str]:
    """Per Transformer member, its best reading of any layer or head by the mean AER over the
    seeds, with its interval, beside its last layer's argmax (what every other table reads as
    its attention); and whether the seeds chose the same head under that reading."""
    lines = []
    for member in members:
        if not places(member):
            continue
        found = [best for kind in layer_kinds([member]) for heads in (True, False)
                 if (best := best_view(member, kind, heads=heads)) is not None]
        if not found:
            continue
        best = min(found, key=lambda one: (one.aer, one.layer, one.head or 0))
        kind = places(member)[best.name]["reading"]
        what = "head" if best.head is not None else "layer average"
        seeds = best_heads(member, kind)
        chosen = (f"the same head, {seeds[0].view}, in every seed" if len(seeds) > 1
                  and same_in_every_seed(seeds) else "one seed" if len(seeds) == 1
                  else f"not the same in every seed ({_chosen(seeds)})")
        last = layer_name(member, "attention", layer_count(member))
        lines.append(f"{member.label}: the best reading is {_column(kind)} of {what} "
                     f"{best.view}, AER {aer_cell(member, best.name)}, against "
                     f"{aer_cell(member, last)} for the last layer's argmax (its attention "
                     f"in the other tables); the best head under it: {chosen}.")
    return lines


LAYER_NOTE = (
    "Each cell: the mean AER over the seeds with its 95% interval (the seeds' spread and the "
    "gold pairs' sampling noise, as every test here; n, the seeds, in the table). A layer "
    "row reads the layer's cross-attention averaged over its heads (the last layer's is the "
    "attention of the other tables); the best head is the head of lowest mean AER under that "
    "reading, so its interval, chosen after looking, is optimistic. Shifted: word t read at "
    "row t+1, the step whose decoder input it is (Chen et al. 2020); norm-based: a head's "
    "weight times the norm of what the source position adds through it, ||alpha W_O^h "
    "(W_V^h h + b_V^h)||, a layer's the norm of its heads' sum (Kobayashi et al. 2020). The "
    "other members' row is their attention under the same readings; the diagonal aligner and "
    "eflomal are one aligner each, their AER in the first column (eflomal's on all the gold "
    "pairs).")

SEED_NOTE = (
    "The head of lowest AER of every seed under each reading (that AER) and its layer whose heads' "
    "average reads best; the last column says whether every seed chose the same head.")


def layer_blocks(members: list[Explained], eflomal: dict | None) -> list[Block]:
    """The two tables and their notes (the best reading in words under the first); none for
    a suite without layers."""
    rows = layer_rows(members, eflomal)
    if not rows:
        return []
    note = " ".join([LAYER_NOTE, *best_lines(members)])
    return [("AER per layer and the best head, across seeds (lower is better)", rows, note),
            ("The best layer and head of each seed", seed_rows(members), SEED_NOTE)]
