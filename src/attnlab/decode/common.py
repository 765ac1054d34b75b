"""What greedy and beam search share: the GNMT length penalty, the per-sentence output limit,
next-token scores (of one model, or an ensemble's), one hypothesis's dense attention, and
running a model in eval mode without gradients."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import Tensor

from attnlab.attention import Weights, as_dense, map_weights
from attnlab.data import BOS_ID, PAD_ID

from .protocol import MaxLen, Searchable, State, Switchable


def length_penalty(length: int | Tensor, alpha: float) -> float | Tensor:
    """GNMT length penalty `lp(Y) = ((5 + |Y|) / 6) ** alpha` (Wu et al. 2016, eq. 14).
    `|Y|` counts every output token, EOS included; alpha = 0 ranks by log-probability alone."""
    return ((5.0 + length) / 6.0) ** alpha


def step_limits(max_len: MaxLen, src_mask: Tensor) -> Tensor:
    """Per-sentence output limit (B,) long on src_mask's device, at least 1 token.

    max_len: an int, or a function of one sentence's real source length (its EOS included), e.g.
    `lambda n: int(1.5 * n) + 5`, so that a sentence's limit does not depend on its batch.
    """
    lengths = src_mask.sum(-1).tolist()
    limits = [max_len(n) for n in lengths] if callable(max_len) else [max_len] * len(lengths)
    if any(int(limit) < 1 for limit in limits):
        raise ValueError(f"max_len must allow at least one output token, got {limits}")
    return torch.tensor([int(limit) for limit in limits], device=src_mask.device)


def log_probs(logits: Tensor) -> Tensor:
    """logits (..., V) -> log-probabilities (..., V); half precision is lifted to float32 first
    so that summing many steps does not lose the small differences that rank beams."""
    if logits.dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    return torch.log_softmax(logits, dim=-1)


def next_token_scores(logits: Tensor) -> Tensor:
    """log_probs for choosing the next output token (R, V): PAD and BOS, which are never
    outputs, get -inf (as in fairseq). The other entries keep the model's log-probabilities,
    so a hypothesis's log_prob is what teacher forcing gives for its tokens."""
    scores = log_probs(logits)
    scores[:, [PAD_ID, BOS_ID]] = float("-inf")
    return scores


def step_scores(model: Searchable[State], tokens: Tensor, state: State
                ) -> tuple[Tensor, Weights | None, State]:
    """One search step: tokens (R,) -> next-token scores (R, V), attention (R, S) (local
    attention: WindowWeights) or None, and the next state. The scores are next_token_scores
    of the model's logits, or what a model that `outputs_log_probs` (an Ensemble: its
    members' mean) returns as they are."""
    logits, weights, state = model.step(tokens, state)
    if model.outputs_log_probs:
        return logits, weights, state
    return next_token_scores(logits), weights, state


def row_attention(attention: Weights, row: int, source_len: int,
                  steps: int | None = None) -> Tensor:
    """One row's dense attention (steps, source_len) out of a search's history attention
    (R, T, S) or WindowWeights (start (R, T), weights (R, T, W)): its first `steps` target
    steps (all when None) over its first source_len (real) positions. Search keeps local
    attention in windows to the end; only a returned hypothesis is densified, here."""
    picked = map_weights(attention, lambda t: t[row, :steps])
    return as_dense(picked, source_len)


@contextlib.contextmanager
def evaluating(model: Switchable) -> Iterator[None]:
    """Eval mode (no dropout, deterministic hard attention) and no autograd for the block; the
    model's training flag is restored afterwards, so validation inside training can decode."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)
