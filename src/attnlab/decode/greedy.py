"""Greedy search: the most probable token at every step, for every sentence of a batch at once."""

from __future__ import annotations

import torch
from torch import Tensor

from attnlab.attention import Weights, join_weights
from attnlab.data import BOS_ID, EOS_ID

from .common import evaluating, row_attention, step_limits, step_scores
from .penalties import Penalty, resolve_penalty
from .protocol import Hypothesis, MaxLen, Searchable, State


def greedy_search(model: Searchable[State], src: Tensor, src_mask: Tensor, *, max_len: MaxLen,
                  alpha: float | None = None,
                  penalty: Penalty | None = None) -> list[Hypothesis]:
    """Decode src (B, S) / src_mask (B, S) greedily -> one Hypothesis per sentence.

    A sentence stops at EOS or after its `max_len` tokens (see `step_limits`); its score is
    `penalty.score` (default: GNMT's length penalty with `alpha`, 1.0), as in `beam_search`.
    Finished rows keep running with their last token (their outputs are ignored): greedy search
    is the simple reference; `beam_search` with beam_size=1 gives the same result and drops
    finished rows.
    """
    penalty = resolve_penalty(penalty, alpha)
    with evaluating(model):
        limits = step_limits(max_len, src_mask)  # (B,)
        state = model.start(src, src_mask)
        batch = src.shape[0]
        tokens = src.new_full((batch,), BOS_ID)
        running = torch.ones(batch, dtype=torch.bool, device=src.device)
        lengths = torch.zeros_like(limits)
        log_prob = torch.zeros(batch, device=src.device)  # (B,)
        outputs: list[Tensor] = []
        weights: list[Weights] = []
        for step in range(int(limits.max())):
            scores, attention, state = step_scores(model, tokens, state)  # (B, V)
            tokens = scores.argmax(-1)
            gained = scores.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
            gained = torch.where(running, gained, 0.0)  # finished rows add nothing
            log_prob = log_prob + gained
            lengths += running
            running &= (tokens != EOS_ID) & (limits > step + 1)
            outputs.append(tokens)
            if attention is not None:
                weights.append(attention)
            if not running.any():
                break
        history = torch.stack(outputs, 1)  # (B, T)
        # (B, T, S), or local attention's windows: start (B, T), weights (B, T, W)
        attention = join_weights(weights, lambda ts: torch.stack(ts, 1)) if weights else None
        return _hypotheses(history, log_prob, lengths, attention, src_mask, penalty)


def _hypotheses(tokens: Tensor, log_prob: Tensor, lengths: Tensor, attention: Weights | None,
                src_mask: Tensor, penalty: Penalty) -> list[Hypothesis]:
    """Cut each row of tokens (B, T) / attention (B, T, S) to its length and real source."""
    sources = src_mask.sum(-1).tolist()
    result = []
    for row, (ids, total, length) in enumerate(
            zip(tokens.tolist(), log_prob.tolist(), lengths.tolist(), strict=True)):
        weights = (None if attention is None
                   else row_attention(attention, row, sources[row], steps=length))
        result.append(Hypothesis(ids[:length], penalty.score(total, length, weights), total,
                                 weights))
    return result
