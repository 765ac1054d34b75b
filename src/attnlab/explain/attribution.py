"""What each source position did for each output token, measured on the model rather than read
off its attention: three attributions of log p(y_t | y_<t, x) to the source embeddings, each a
(T, S) array shaped like attention (row t: target token t, EOS last; column s: source piece s,
EOS last); the gradients from captum (Kokhlikyan et al. 2020).

- gradient: gradient x input (Shrikumar et al. 2016; Ding, Xu & Koehn 2019 read alignments off
  it), summed over the embedding: the first-order change of log p(y_t) when position s's
  embedding is scaled towards zero.
- integrated_gradients (Sundararajan et al. 2017): the same integrated along the straight line
  from a baseline source whose every embedding is zero (the padding's; the mask, so the length,
  unchanged) to the real one, in `steps` Gauss-Legendre points; a row sums to log p(y_t | x)
  - log p(y_t | baseline) up to the integral's error (completeness).
- erasure (Li, Monroe & Jurafsky 2016): position s's embedding replaced by the zero baseline,
  the drop in log p(y_t). Replaced, not deleted: deleting would move every later position, and
  local attention and the location score read positions.

The target is forced (teacher forcing in eval mode), so attention and the attributions describe
the same output. The gradient methods are batched over the target steps: row t of a batch of T
copies asks for step t (a backward pass gives one output's gradient), so one pass (one per
point for integrated gradients, chunked) serves the whole sentence. Erasure needs no gradient:
one forced pass of a copy with position s erased gives the drop at every step at once, so it
runs S copies, not captum's feature ablation over T copies per position (T times the work).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
from captum.attr import LayerGradientXActivation, LayerIntegratedGradients
from torch import Tensor, nn

from attnlab.attention import as_dense
from attnlab.data import collate
from attnlab.data.vocab import PAD_ID
from attnlab.models import Seq2Seq
from attnlab.models.decoder_base import DecoderOutput

from .methods import METHODS, STEPS

CHUNK = 512     # sequences per forward pass: bounds memory for long sentences


@dataclass(frozen=True)
class ForcedPair:
    """One (source, target) pair as the model reads it: src (1, S) with EOS, tgt_in (1, T)
    from BOS, tgt_out (1, T) ending in EOS."""

    src: Tensor
    src_mask: Tensor
    tgt_in: Tensor
    tgt_out: Tensor

    @classmethod
    def of(cls, source_ids: Sequence[int], target_ids: Sequence[int],
           device: torch.device) -> ForcedPair:
        batch = collate([(source_ids, target_ids)]).to(device)
        return cls(batch.src, batch.src_mask, batch.tgt_in, batch.tgt_out)

    @property
    def steps(self) -> int:
        return int(self.tgt_in.shape[1])

    @property
    def positions(self) -> int:
        return int(self.src.shape[1])


def source_embedding(model: Seq2Seq) -> nn.Embedding:
    """The layer whose output is attributed: the encoder's token embedding."""
    embedding = model.encoder.embedding
    if not isinstance(embedding, nn.Embedding):
        raise TypeError(f"{type(model.encoder).__name__} has no token embedding to attribute to")
    return embedding


def step_log_probs(model: Seq2Seq, src: Tensor, src_mask: Tensor, tgt_in: Tensor,
                   tgt_out: Tensor) -> Tensor:
    """log p(y_t | y_<t, x) of every forced target token: (B, T)."""
    return _chosen(model, model.all_positions(src, src_mask, tgt_in), tgt_out)


def log_prob_at(model: Seq2Seq, src: Tensor, src_mask: Tensor, tgt_in: Tensor,
                tgt_out: Tensor, rows: Tensor) -> Tensor:
    """log p(y_t | y_<t, x) at one step t = rows[b] of each sequence b: (B,). The output layer
    (and its softmax over the vocabulary, the costliest part) runs at that step only, not at
    all T: an attribution asks for one step per sequence of a batch of T copies."""
    features, _ = model.decoder.teacher_forced(tgt_in, model.encode(src, src_mask))  # (B, T, F)
    batch = torch.arange(features.shape[0], device=features.device)
    logits = model.decoder.output(features[batch, rows])                            # (B, V)
    scores = logits if model.outputs_log_probs else logits.log_softmax(-1)
    return scores.gather(1, tgt_out[batch, rows].unsqueeze(1)).squeeze(1)


def forced_pass(model: Seq2Seq, pair: ForcedPair) -> tuple[np.ndarray | None, list[float]]:
    """One forced pass: its attention, dense (T, S) (None for a model without it), and
    log p(y_t | y_<t, x) of every target token."""
    with torch.no_grad():
        out = model.all_positions(pair.src, pair.src_mask, pair.tgt_in)
        log_probs: list[float] = _chosen(model, out, pair.tgt_out)[0].double().tolist()
    if out.attention is None:
        return None, log_probs
    dense: np.ndarray = as_dense(out.attention, pair.positions)[0].float().cpu().numpy()
    return dense, log_probs


def _chosen(model: Seq2Seq, out: DecoderOutput, tgt_out: Tensor) -> Tensor:
    """The log-probabilities (B, T) of the tokens tgt_out in a forced pass's output."""
    scores = out.logits if model.outputs_log_probs else out.logits.log_softmax(-1)
    return scores.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)


def attribute(model: Seq2Seq, pair: ForcedPair, method: str, *,
              steps: int = STEPS) -> np.ndarray:
    """`method`'s relevance of every source position to every target token: (T, S), float64
    of the model's dtype. The model should be in eval mode (dropout off, hard attention
    deterministic); its parameters get no gradient."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution {method!r}: one of {', '.join(METHODS)}")
    T, S = pair.steps, pair.positions
    layer = source_embedding(model)
    rows = torch.arange(T, device=pair.src.device)   # row t of the batch asks for step t
    src = pair.src.expand(T, S)
    extra = (pair.src_mask.expand(T, S), pair.tgt_in.expand(T, -1),
             pair.tgt_out.expand(T, -1), rows)

    chosen = partial(log_prob_at, model)   # (src, src_mask, tgt_in, tgt_out, rows) -> (B',)

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


def erasure(model: Seq2Seq, pair: ForcedPair) -> Tensor:
    """log p(y_t | x) - log p(y_t | x with position s's embedding zero): (T, S). Copy 0 of the
    batch is the sentence whole and copy s + 1 has position s erased (a hook scales the
    embedding layer's output by a 0/1 mask), so one forced pass gives every step's drop."""
    S = pair.positions
    eye = torch.eye(S, device=pair.src.device)
    keep = torch.cat([torch.ones_like(eye[:1]), 1.0 - eye]).unsqueeze(-1)  # (1 + S, S, 1)
    mask = keep[:0]
    handle = source_embedding(model).register_forward_hook(lambda _m, _i, out: out * mask)
    try:
        with torch.no_grad():
            log_probs = []
            for start in range(0, S + 1, CHUNK):
                mask = keep[start:start + CHUNK]
                n = mask.shape[0]
                log_probs.append(step_log_probs(
                    model, pair.src.expand(n, S), pair.src_mask.expand(n, S),
                    pair.tgt_in.expand(n, -1), pair.tgt_out.expand(n, -1)))      # (n, T)
    finally:
        handle.remove()
    found = torch.cat(log_probs)                                           # (1 + S, T)
    return (found[:1] - found[1:]).T                                       # (T, S)


class frozen:
    """Eval mode with parameters that need no gradient, restored afterwards: attribution
    differentiates with respect to the embeddings' outputs only."""

    def __init__(self, model: nn.Module):
        self.model = model

    def __enter__(self) -> None:
        self.training = self.model.training
        self.needed = [p.requires_grad for p in self.model.parameters()]
        self.model.eval()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)

    def __exit__(self, *exc: object) -> None:
        for parameter, needed in zip(self.model.parameters(), self.needed, strict=True):
            parameter.requires_grad_(needed)
        self.model.train(self.training)
