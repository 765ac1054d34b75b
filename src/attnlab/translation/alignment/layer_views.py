"""A Transformer's cross-attention read layer by layer and head by head: the views of one forced
pair that layer_readings.py reads, beside "attention" (the last layer's head average).

    views = layer_views(model, pair)   # {} for a model without heads (every RNN decoder)
    views["L2"]          layer 2's weights averaged over its heads          (T, S)
    views["L2H5"]        the weights of its head 5                          (T, S)
    views["L2 norm"]     || sum_h alpha^h_tj f^h(h_j) ||                    (T, S)
    views["L2H5 norm"]   alpha^5_tj || f^5(h_j) ||                          (T, S)

Layers and heads count from 1, the layer nearest the input first. f^h(h_j) = W_O^h (W_V^h h_j +
b_V^h) is what source position j adds through head h to the layer's output (Kobayashi et al.
2020, sec. 3, eq. 6: their f(x) = (x W^V + b^V) W^O, split by head; W_O^h the columns of the
output projection that read head h); the output bias, added once whatever is attended, is
nobody's. The layer's view is the norm of the heads' sum, what the layer adds in one vector.
(models.TransformerDecoder.context_weight's W_O W_V, read with the heads' average, is the
registry's "attention x value norm": the same only where the heads agree.)

Every view is over the model's pieces, "</s>" last on both sides, as explain_pair's attention;
extractions.unit_views merges them to the gold's units as it merges attention. The weights come
from one forced pass, the layer average exactly as the model averages its last layer, so "L<last>"
is "attention".
"""

from __future__ import annotations

import re
from typing import cast

import numpy as np
import torch
from torch import Tensor

from attnlab.decode import evaluating
from attnlab.explain.attribution import ForcedPair
from attnlab.explain.explanation import ForcedText
from attnlab.models import MultiHeadAttention, Seq2Seq

# "L2" a layer's head average, "L2H5" a head: 1-based
VIEW = re.compile(r"L(\d+)(?:H(\d+))?")


def view_name(layer: int, head: int | None = None) -> str:
    """The view of `layer` (1-based): its head average, or its head `head` (1-based)."""
    return f"L{layer}" if head is None else f"L{layer}H{head}"


def view_place(view: str) -> tuple[int, int | None] | None:
    """(layer, head or None) of a layer view's name, None for any other view."""
    match = VIEW.fullmatch(view)
    if match is None:
        return None
    return int(match.group(1)), None if match.group(2) is None else int(match.group(2))


def norm_name(view: str) -> str:
    """The norm-based view beside a layer view: "L2H5" -> "L2H5 norm"."""
    return f"{view} norm"


def layer_views(model: Seq2Seq, pair: ForcedText) -> dict[str, np.ndarray]:
    """Every layer's and head's weights and norms for the forced pair (see the module), each
    (T pieces, S pieces); {} when the model's forced pass gives no heads."""
    device = next(model.parameters()).device
    forced = ForcedPair.of(pair.source_ids, pair.target_ids, device)
    with evaluating(model):
        out = model.all_positions(forced.src, forced.src_mask, forced.tgt_in)
        if out.heads is None:
            return {}
        contributions = head_contributions(model, forced)   # (L, H, S, D)
        heads: Tensor = out.heads                            # (1, L, H, T, S)
        views: dict[str, np.ndarray] = {}
        for index in range(heads.shape[1]):
            layer = index + 1
            # (1, H, T, S) -> (T, S), the reduction the model makes of its last layer
            views[view_name(layer)] = heads[:, index].mean(1)[0].float().cpu().numpy()
            for head in range(heads.shape[2]):
                views[view_name(layer, head + 1)] = heads[0, index, head].float().cpu().numpy()
            views |= _norms(layer, heads[0, index], contributions[index])
    return views


def _norms(layer: int, weights: Tensor, contributions: Tensor) -> dict[str, np.ndarray]:
    """weights (H, T, S) and f^h(h_j) (H, S, D) -> the layer's and each head's norm view,
    float64 (T, S)."""
    summed = torch.einsum("hts,hsd->tsd", weights, contributions)   # (T, S, D)
    found = {norm_name(view_name(layer)): summed.norm(dim=-1).double().cpu().numpy()}
    each = weights * contributions.norm(dim=-1).unsqueeze(1)          # (H, T, S)
    for head, values in enumerate(each, start=1):
        found[norm_name(view_name(layer, head))] = values.double().cpu().numpy()
    return found


def head_contributions(model: Seq2Seq, forced: ForcedPair) -> Tensor:
    """f^h(h_j) = W_O^h (W_V^h h_j + b_V^h) of every layer, head and source position of one
    pair: (L, H, S, D)."""
    annotations = model.encode(forced.src, forced.src_mask).annotations   # (1, S, D_key)
    found = []
    for attention in cross_attentions(model):
        values = attention.project(annotations).values[0]   # (H, S, d_k): W_V^h h_j + b_V^h
        # W_O (D, H * d_k): head h reads columns h d_k .. (h + 1) d_k - 1
        output = attention.output_proj.weight.view(-1, attention.heads, attention.head_dim)
        found.append(torch.einsum("hsk,dhk->hsd", values, output))
    return torch.stack(found)


def cross_attentions(model: Seq2Seq) -> list[MultiHeadAttention]:
    """The cross-attention of every decoder layer, the lowest first: a Transformer's (the one
    decoder whose forced pass gives heads)."""
    found = model.decoder.attention_layers()
    if not found or not all(isinstance(layer, MultiHeadAttention) for layer in found):
        raise ValueError("per-head norms need a Transformer decoder's cross-attention")
    return cast(list[MultiHeadAttention], found)
