"""What each source position did for each output token, measured on the model rather than read
off its attention: three attributions of log p(y_t | y_<t, x) to the source embeddings, each a
(T, S) array shaped like attention (row t: target token t, EOS last; column s: source piece s,
EOS last).

- gradient: gradient x input (Shrikumar et al. 2016; Ding, Xu & Koehn 2019 read alignments off
  it), summed over the embedding: the first-order change of log p(y_t) when position s's
  embedding is scaled towards zero.
- integrated_gradients (Sundararajan et al. 2017): the same integrated along the straight line
  from a baseline source whose every embedding is zero (the padding's; the mask, so the length,
  unchanged) to the real one. A row sums to log p(y_t | x) - log p(y_t | baseline) up to the
  integral's error; that error, worst over the rows (the completeness gap, in nats), is
  reported with every result, and by default the points are chosen to bring it under
  TOLERANCE (attnlab.explain.integrated).
- erasure (Li, Monroe & Jurafsky 2016): position s's embedding replaced by the zero baseline,
  the drop in log p(y_t). Replaced, not deleted: deleting would move every later position, and
  local attention and the location score read positions.

The target is forced (teacher forcing in eval mode), so attention and the attributions describe
the same output. The gradients come from one batched backward over the rows and the points
(attnlab.explain.gradients), not from T copies of the model per point as with captum, which
tests/explain/reference_attribution.py keeps as the reference they are held to. Erasure needs
no gradient: one forced pass of a copy with position s erased gives the drop at every step at
once, so it runs S copies, not captum's feature ablation over T copies per position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from attnlab.attention import as_dense
from attnlab.data import collate
from attnlab.data.vocab import PAD_ID
from attnlab.models import Seq2Seq
from attnlab.models.decoder_base import DecoderOutput

from .gradients import SourcePath, chosen_log_probs, source_embedding, source_gradients
from .integrated import Integrated, converged, fixed_rule
from .methods import MAX_STEPS, METHODS, STEPS, TOLERANCE

CHUNK = 512     # sequences per forward pass of erasure: bounds memory for long sentences


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


def step_log_probs(model: Seq2Seq, src: Tensor, src_mask: Tensor, tgt_in: Tensor,
                   tgt_out: Tensor) -> Tensor:
    """log p(y_t | y_<t, x) of every forced target token: (B, T)."""
    return _chosen(model, model.all_positions(src, src_mask, tgt_in), tgt_out)


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
    return chosen_log_probs(model, out.logits, tgt_out)


@dataclass(frozen=True)
class Attribution:
    """One attribution of a forced pair: values (T, S), float64 of the model's dtype; steps:
    integrated gradients' points (the rule it ended with), None for the others; gap: their
    completeness gap, the worst row's |sum of the row - (log p(y_t | x) - log p(y_t |
    baseline))| in nats, None for the others; tolerance: the gap asked for (None: a fixed
    rule of `steps` points); capped: the tolerance was not met within the cap of points;
    stepped: log p steps along the path, where no rule meets it (attnlab.explain.integrated)."""

    method: str
    values: np.ndarray
    steps: int | None = None
    gap: float | None = None
    tolerance: float | None = None
    capped: bool = False
    stepped: bool = False


def attribute(model: Seq2Seq, pair: ForcedPair, method: str, *, steps: int = STEPS,
              tolerance: float | None = TOLERANCE) -> np.ndarray:
    """`method`'s relevance of every source position to every target token: (T, S), float64
    of the model's dtype (`attribution(...).values`)."""
    return attribution(model, pair, method, steps=steps, tolerance=tolerance).values


def attribution(model: Seq2Seq, pair: ForcedPair, method: str, *, steps: int = STEPS,
                tolerance: float | None = TOLERANCE, cap: int = MAX_STEPS) -> Attribution:
    """`method`'s attribution of the pair, with what integrated gradients report. Integrated
    gradients start from `steps` points and halve their panels until the completeness gap is
    at most `tolerance` nats or the points would pass `cap`; with tolerance None they use one
    `steps`-point Gauss-Legendre rule (captum's). The model should be in eval mode (dropout
    off, hard attention deterministic); its parameters get no gradient."""
    if method not in METHODS:
        raise ValueError(f"unknown attribution {method!r}: one of {', '.join(METHODS)}")
    if method == "erasure":
        with frozen(model):
            return Attribution(method, _numpy(erasure(model, pair)))
    layer = source_embedding(model)
    with frozen(model):
        embedded = layer(pair.src).detach()                                   # (1, S, E)
        if method == "gradient":   # x . d log p / dx: the point x of the path from 0
            path = SourcePath(pair.src, pair.src_mask, pair.tgt_in, pair.tgt_out, embedded,
                              torch.zeros_like(embedded))
            one = torch.ones(1, dtype=embedded.dtype, device=embedded.device)
            return Attribution(method, _numpy(source_gradients(model, path, one, one)[0]))
        path = SourcePath(pair.src, pair.src_mask, pair.tgt_in, pair.tgt_out, embedded,
                          layer(torch.full_like(pair.src, PAD_ID)).detach())  # zero: padding's
        found: Integrated = (fixed_rule(model, path, steps) if tolerance is None else
                             converged(model, path, steps=steps, tolerance=tolerance, cap=cap))
    return Attribution(method, _numpy(found.values), found.steps, found.gap, tolerance,
                       found.capped, found.stepped)


def _numpy(values: Tensor) -> np.ndarray:
    found: np.ndarray = values.detach().double().cpu().numpy()
    return found


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
