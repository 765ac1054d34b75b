"""The explanation page's "faithfulness per layer" table: the faithfulness tests
(attnlab.explain.summary) on each attention layer of every member, a Transformer's layers (its
decoder's cross-attention, every head of the layer intervened on together, the layer's head
average read) beside the recurrent members' one layer, mean ± sd over the seeds.

A record holds the per-layer summaries under "faithfulness_layers" (first layer first:
attnlab.translation.faithfulness.LAYERS_KEY); a record without them (a recurrent decoder's, or
one made before them) has one layer, its "faithfulness". Layers are numbered from 1, the first
next to the embeddings; the last is the one the rest of the report reads.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np

from attnlab.explain.methods import LABELS
from attnlab.viz.report import html_table

from ..stats.explanations import Explained
from ..stats.seeds import spread
from .controls import Block
from .tables import markdown_table

LAYERS_KEY = "faithfulness_layers"   # as attnlab.translation.faithfulness writes it

# A column: its heading and its figure of one layer's summary (a record's "faithfulness"
# shape), None where the summary lacks it.
Figure = Callable[[dict], float | None]


def _rate(name: str) -> Figure:
    """The share in % of a layer's tested steps whose chosen token changed erasing `name`'s
    position (an entry of attnlab.explain.controls.ERASED), as the faithfulness table's."""
    def figure(summary: dict) -> float | None:
        steps, flips = sum(summary.get("steps", [])), summary.get("flips", {}).get(name)
        return None if flips is None or not steps else 100 * sum(flips) / steps
    return figure


def _mean(group: str, name: str | None = None) -> Figure:
    """The mean over the sentences of a per-sentence figure (None entries left out)."""
    def figure(summary: dict) -> float | None:
        values = summary.get(group)
        values = values.get(name) if isinstance(values, dict) and name else values
        kept = [value for value in values or [] if value is not None]
        return float(np.mean(kept)) if kept else None
    return figure


COLUMNS: dict[str, Figure] = {
    "flips: top attended %": _rate("top_attention"),
    "flips: second attended %": _rate("second_attention"),
    "flips: random other %": _rate("random"),
    "permutation TVD": _mean("permutation_tvd"),
    "adversarial JSD": _mean("adversarial_jsd"),
    "comprehensiveness: attention": _mean("comprehensiveness", "attention"),
    "comprehensiveness: random": _mean("comprehensiveness", "random"),
    "randomisation tau: attention": _mean("randomisation", "attention"),
}


def layers_of(record: dict) -> list[dict]:
    """A record's per-layer summaries, first layer first (one, its "faithfulness", without)."""
    layers: list[dict] = record.get(LAYERS_KEY) or [record["faithfulness"]]
    return layers


def _agreement_columns(members: list[Explained]) -> dict[str, Figure]:
    """Kendall's tau of attention with each attribution the records hold."""
    names: dict[str, None] = {}
    for member in members:
        for record in member.records:
            for summary in layers_of(record):
                names.update(dict.fromkeys(summary.get("agreement", {})))
    return {f"tau: {LABELS.get(name, name)}": _mean("agreement", name) for name in names}


def _cell(values: list[float | None], digits: int) -> str:
    """"0.412 ± 0.010" over the seeds that have the figure, "-" for none."""
    kept = [value for value in values if value is not None and np.isfinite(value)]
    return spread(kept).text(digits) if kept else "-"


def layer_rows(members: list[Explained]) -> list[list[str]]:
    """Member x layer, each column of COLUMNS and each agreement, mean ± sd over the seeds; a
    layer some seeds lack (records of unequal depth) is over the seeds that have it."""
    columns = {**COLUMNS, **_agreement_columns(members)}
    rows = [["member", "layer", "seeds", *columns]]
    for member in members:
        per_seed = [layers_of(record) for record in member.records]
        depth = max(len(layers) for layers in per_seed)
        for index in range(depth):
            summaries = [layers[index] for layers in per_seed if index < len(layers)]
            layer = f"{index + 1}" + (" (read)" if depth > 1 and index == depth - 1 else "")
            rows.append([member.label, layer, str(len(summaries)),
                         *(_cell([figure(summary) for summary in summaries],
                                 1 if name.endswith("%") else 3)   # % as the flips table's
                           for name, figure in columns.items())])
    return rows


NOTE = (
    "The faithfulness tests on each attention layer: a Transformer's every decoder layer (its "
    "cross-attention; each test changes the weights of every head of that layer alike and "
    "reads the layer's head average as its attention), a recurrent decoder's one layer. Layer "
    "1 is next to the embeddings; '(read)' marks the last, the attention the other tables "
    "read. Flips: the share (%) of tested steps whose chosen token changed when a position's "
    "weight was zeroed and the rest renormalised (Serrano & Smith 2019); permutation TVD: the "
    "median total variation distance of the output over shuffles of the weights, and "
    "adversarial JSD: the farthest weights found within TVD 0.01 of the output (Jain & "
    "Wallace 2019); comprehensiveness (DeYoung et al. 2020) of attention's ranking and a random "
    "one; randomisation tau: attention against the randomised model's (Adebayo et al. 2018); "
    "tau: attention against each attribution. Mean ± sd over the seeds (n in the table).")
HEADING = "Faithfulness per layer"


def layer_block(members: list[Explained]) -> list[Block]:
    """The table as a block of the explanation page (heading, rows, note); none when no member
    has more than one layer (the faithfulness table says it all then)."""
    if not any(len(layers_of(record)) > 1 for member in members for record in member.records):
        return []
    return [(HEADING, layer_rows(members), NOTE)]


def layer_faithfulness(members: list[Explained]) -> tuple[str, str]:
    """The table in HTML and in Markdown, each with its heading and note; two empty strings
    when no member has more than one layer."""
    blocks = layer_block(members)
    if not blocks:
        return "", ""
    heading, rows, note = blocks[0]
    return (f"<h3>{html.escape(heading)}</h3>{html_table(rows)}<p>{html.escape(note)}</p>",
            f"{heading}:\n\n{markdown_table(rows)}\n\n{note}")
