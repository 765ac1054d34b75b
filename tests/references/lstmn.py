"""The LSTMN in loops, straight from the equations page of the docs ("Self-attention: the
LSTMN", docs/equations.md).

Slow and obvious on purpose: one sentence, one position, one vector at a time, reading the fast
module's parameters and nothing else of it. Scores come from attnlab.attention.reference (itself
the specification of every score). Padding is handled by reading only a sentence's real tokens.
Dropout is not modelled: compare with the module in eval mode. `reweight` replaces the weights
s^t of a layer by others before they are read, as the module's `intervention` hook does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch
from torch import Tensor

from attnlab.models.lstmn import LSTMN, LSTMNLayer
from references.attention import alignment

# (t, s^t (t,)) -> the weights read instead (t,)
Reweight = Callable[[int, Tensor], Tensor]


def layer_loop(layer: LSTMNLayer, xs: list[Tensor], positions: list[int],
               reweight: Reweight | None = None
               ) -> tuple[list[Tensor], list[Tensor], dict[tuple[int, int], Tensor]]:
    """One layer over one sentence's real tokens xs (each (D,)) at `positions` in the batch.

    Returns the hidden tape [h_1..h_n], the memory tape [c_1..c_n] (each (H,)) and the
    attention weights {(t, i): s_i^t} for i < t (0-based, indices into xs). Only the
    `location` score sees `positions`: it addresses tape entries by their place in the batch.
    """
    size = layer.hidden_dim
    # W [h~_t; x_t] + b as one matrix, as the paper writes it: W = [W_h~ | W_x].
    w = torch.cat([layer.summary_gates.weight, layer.input_gates.weight], dim=1)  # (4H, H + D)
    b = layer.input_gates.bias
    hs: list[Tensor] = []
    cs: list[Tensor] = []
    weights: dict[tuple[int, int], Tensor] = {}
    for t, x in enumerate(xs):
        if t == 0:  # the tape is empty: h~_1 = c~_1 = 0
            h_tilde, c_tilde = x.new_zeros(size), x.new_zeros(size)
        else:
            query = torch.cat([x, h_tilde])  # [x_t; h~_{t-1}]
            if layer.query_proj is not None:
                query = layer.query_proj.weight @ query
            keys = x.new_zeros(positions[t], size)  # h_i at its place in the batch
            for i in range(t):
                keys[positions[i]] = hs[i]
            at = alignment(layer.attention.score, query, keys, positions[:t])
            s = [at[positions[i]] for i in range(t)]  # s_i^t
            if reweight is not None:
                s = list(reweight(t, torch.stack(s)))
            h_tilde = sum((s[i] * hs[i] for i in range(t)), x.new_zeros(size))
            c_tilde = sum((s[i] * cs[i] for i in range(t)), x.new_zeros(size))
            weights.update({(t, i): s[i] for i in range(t)})
        z = w @ torch.cat([h_tilde, x]) + b
        i_gate = torch.sigmoid(z[:size])
        f_gate = torch.sigmoid(z[size : 2 * size])
        o_gate = torch.sigmoid(z[2 * size : 3 * size])
        c_hat = torch.tanh(z[3 * size :])
        c = f_gate * c_tilde + i_gate * c_hat
        hs.append(o_gate * torch.tanh(c))
        cs.append(c)
    return hs, cs, weights


def lstmn_loop(lstmn: LSTMN, inputs: Tensor, mask: Tensor | None = None,
               reweight: Reweight | None = None
               ) -> tuple[Tensor, Tensor, tuple[Tensor, Tensor]]:
    """inputs (B, T, D), mask (B, T) bool -> outputs (B, T, H), weights (L, B, T, T),
    (h, c) each (L, B, H) at the last real token; zeros wherever the mask is False.
    `reweight` applies to the top layer's weights (t counts a sentence's real tokens)."""
    batch, length, _ = inputs.shape
    layers, size = len(lstmn.layers), lstmn.hidden_dim
    if mask is None:
        mask = torch.ones(batch, length, dtype=torch.bool)
    outputs = inputs.new_zeros(batch, length, size)
    weights = inputs.new_zeros(layers, batch, length, length)
    final_h = inputs.new_zeros(layers, batch, size)
    final_c = inputs.new_zeros(layers, batch, size)
    for b in range(batch):
        real = [t for t in range(length) if mask[b, t]]
        xs = [inputs[b, t] for t in real]
        for n, layer in enumerate(lstmn.layers):
            # (nn.ModuleList is not generic: its items are typed as plain modules)
            top = n == layers - 1
            hs, cs, layer_weights = layer_loop(cast(LSTMNLayer, layer), xs, real,
                                               reweight if top else None)
            for (t, i), s in layer_weights.items():
                weights[n, b, real[t], real[i]] = s
            if hs:
                final_h[n, b], final_c[n, b] = hs[-1], cs[-1]
            xs = hs
        for t, h in zip(real, xs, strict=True):
            outputs[b, t] = h
    return outputs, weights, (final_h, final_c)
