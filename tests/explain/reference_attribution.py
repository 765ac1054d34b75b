"""The gradient attributions as attnlab computed them before the batched backward
(attnlab.explain.gradients): captum's layer attributions (Kokhlikyan et al. 2020) over T copies
of the pair, copy t asking for step t, every copy running the whole model. Slow and plain on
purpose: the reference the batched path is held to (test_attribution_parity.py) and the "old"
column of benchmarks/explain.py."""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from captum.attr import LayerGradientXActivation, LayerIntegratedGradients
from torch import Tensor

from attnlab.data.vocab import PAD_ID
from attnlab.explain.attribution import ForcedPair, erasure, frozen, source_embedding
from attnlab.models import Seq2Seq

CHUNK = 512     # sequences per forward pass, as before


def log_prob_at(model: Seq2Seq, src: Tensor, src_mask: Tensor, tgt_in: Tensor,
                tgt_out: Tensor, rows: Tensor) -> Tensor:
    """log p(y_t | y_<t, x) at one step t = rows[b] of each sequence b: (B,)."""
    features, _ = model.decoder.teacher_forced(tgt_in, model.encode(src, src_mask))  # (B, T, F)
    batch = torch.arange(features.shape[0], device=features.device)
    logits = model.decoder.output(features[batch, rows])                            # (B, V)
    scores = logits if model.outputs_log_probs else logits.log_softmax(-1)
    return scores.gather(1, tgt_out[batch, rows].unsqueeze(1)).squeeze(1)


def reference_attribute(model: Seq2Seq, pair: ForcedPair, method: str, *,
                        steps: int = 32) -> np.ndarray:
    """`method`'s (T, S) attribution by captum: gradient x input, or integrated gradients at
    one `steps`-point Gauss-Legendre rule from the zero (padding) embedding; erasure as the
    library computes it (it never used captum)."""
    T, S = pair.steps, pair.positions
    layer = source_embedding(model)
    rows = torch.arange(T, device=pair.src.device)   # row t of the batch asks for step t
    src = pair.src.expand(T, S)
    extra = (pair.src_mask.expand(T, S), pair.tgt_in.expand(T, -1),
             pair.tgt_out.expand(T, -1), rows)
    chosen = partial(log_prob_at, model)
    with frozen(model):
        if method == "gradient":
            per_dim = LayerGradientXActivation(chosen, layer).attribute(
                src, additional_forward_args=extra)                       # (T, S, E)
            values = per_dim.sum(-1)
        elif method == "integrated_gradients":
            baseline = torch.full_like(src, PAD_ID)   # zero embeddings (padding_idx's row)
            per_dim = LayerIntegratedGradients(chosen, layer).attribute(
                src, baselines=baseline, additional_forward_args=extra, n_steps=steps,
                method="gausslegendre", internal_batch_size=max(1, CHUNK // T) * T)
            values = per_dim.sum(-1)
        else:
            values = erasure(model, pair)
    result: np.ndarray = values.detach().double().cpu().numpy()
    return result
