"""Every layer and head of a Transformer's cross-attention for one sentence, as one grid of
heatmaps on one colour scale: a row per layer, a column per head and the layer's mean over its
heads last (the mean of the last layer is the attention attnlab reads everywhere else).
Drawn by comparison_grid's panels, so every cell is the same square in every panel."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from attnlab.viz.comparison_grid import heatmap_grid_figure


def heads_grid_figure(heads: np.ndarray, source_tokens: Sequence[str],
                      target_tokens: Sequence[str], *, title: str,
                      units: str = "words") -> Figure:
    """heads (L, H, T, S): layer l's head h over the S source tokens for each of the T output
    tokens -> a figure of L rows of H + 1 panels ("layer l · head h", then "layer l · mean").
    ValueError when the shape does not match the tokens."""
    heads = np.asarray(heads, dtype=np.float64)
    if heads.ndim != 4:
        raise ValueError(f"heads must be (layers, heads, target, source), got shape "
                         f"{heads.shape}.")
    layers, count = heads.shape[:2]
    panels = []
    for layer in range(layers):
        panels += [(f"layer {layer + 1} · head {head + 1}", heads[layer, head], source_tokens,
                    target_tokens) for head in range(count)]
        panels.append((f"layer {layer + 1} · mean", heads[layer].mean(0), source_tokens,
                       target_tokens))
    legend = (f"{layers} layers x {count} heads and each layer's mean; columns: source "
              f"{units}; rows: output {units}")
    return heatmap_grid_figure(panels, title=title, units=units, columns=count + 1,
                               legend=legend)
