"""Batched beam search: B sentences x K beams advance as one batch of B*K decoder rows.

The encoder runs once and `decoder.start` once, so each sentence's keys are projected once
(they live in the `Memory`). The memory is repeated to B*K rows once at the start; every step
reorders only the per-hypothesis state (`DecoderState.reorder`), since the K rows of a sentence
hold identical memory rows. Sentences that are done leave the batch (memory included), so late
steps only pay for the sentences still searching; they leave in groups (once a quarter of the
sentences held are done), since every departure copies the whole memory.

Each step ranks the 2K best extensions of a sentence by summed log-probability. An extension
ending in EOS among the first K is finished (taken out of the beam, it stays finished); the
first K extensions not ending in EOS form the next beam, so the beam never shrinks. A sentence
is done once K hypotheses have finished, or at its length limit, where its K best extensions
finish as they are (with or without EOS). The length and coverage penalties (penalties.py) are
applied at the end, to rank the finished hypotheses (as fairseq applies its length penalty).
With K = 1 this is greedy search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

import torch
from torch import Tensor

from attnlab.attention import Weights, join_weights, map_weights
from attnlab.data import BOS_ID, EOS_ID

from .common import evaluating, row_attention, step_limits, step_scores
from .penalties import Penalty, resolve_penalty
from .protocol import Hypothesis, MaxLen, Searchable, State


@dataclass
class _Finished:
    """Hypotheses finished at one step, all of the same length t: sentence (F,) their index in
    the input batch; tokens (F, t); log_prob (F,); attention (F, t, S) (local attention:
    windows, start (F, t), weights (F, t, W)) or None."""

    sentence: Tensor
    tokens: Tensor
    log_prob: Tensor
    attention: Weights | None


@dataclass
class _Beams(Generic[State]):
    """The live search over N sentences still searching, K beams each; rows are n * K + k.

    sentence (N,) index in the input batch; limits (N,) output limits; done (N,) finished
    hypotheses so far; live (N,) bool, False for a sentence that is done but still held (its
    scores are all -inf, so it proposes and finishes nothing); scores (N, K) summed
    log-probabilities (-inf: an empty beam slot);
    tokens (N*K, t) and attention (N*K, t, S) (local attention: windows, never densified
    during search) or None: each row's history; state: the decoder's.
    """

    sentence: Tensor
    limits: Tensor
    done: Tensor
    live: Tensor
    scores: Tensor
    tokens: Tensor
    attention: Weights | None
    state: State

    @classmethod
    def start(cls, state: State, limits: Tensor, beam_size: int) -> _Beams[State]:
        """Repeat every sentence's state and memory K times; only beam 0 is live at first, so
        the first step does not propose the same extension K times."""
        batch = limits.shape[0]
        rows = torch.arange(batch, device=limits.device).repeat_interleave(beam_size)
        state = state.reorder(rows, memory=True)  # the one memory expansion
        scores = torch.full((batch, beam_size), float("-inf"), device=limits.device)
        scores[:, 0] = 0.0
        return cls(rows.view(batch, beam_size)[:, 0], limits, torch.zeros_like(limits),
                   torch.ones_like(limits, dtype=torch.bool), scores,
                   rows.new_full((batch * beam_size, 0), BOS_ID), None, state)

    def last_tokens(self) -> Tensor:
        """(N*K,) the input of the next step: BOS first, then each row's last token."""
        return self.tokens[:, -1] if self.tokens.shape[1] else self.tokens.new_full(
            (self.tokens.shape[0],), BOS_ID)


def beam_search(model: Searchable[State], src: Tensor, src_mask: Tensor, *, beam_size: int,
                alpha: float | None = None, max_len: MaxLen, n_best: int = 1,
                penalty: Penalty | None = None) -> list[list[Hypothesis]]:
    """Beam search over src (B, S) / src_mask (B, S) -> per sentence its n_best hypotheses,
    best first by `penalty.score`: by default `log_prob / ((5 + |Y|) / 6) ** alpha` (GNMT, Wu
    et al. 2016; alpha 1.0 unless given), with a coverage penalty when penalty.beta > 0.

    max_len: an int, or a function of a sentence's real source length (see `step_limits`).
    A sentence's result does not depend on the other sentences of its batch.
    """
    if not 1 <= n_best <= beam_size:
        raise ValueError(f"need 1 <= n_best <= beam_size, got n_best={n_best}, "
                         f"beam_size={beam_size}")
    penalty = resolve_penalty(penalty, alpha)
    with evaluating(model):
        limits = step_limits(max_len, src_mask)  # (B,)
        beams = _Beams.start(model.start(src, src_mask), limits, beam_size)
        finished: list[_Finished] = []
        for step in range(int(limits.max())):
            scores, weights, beams.state = step_scores(model, beams.last_tokens(), beams.state)
            advanced = _advance(beams, scores, weights, step + 1, finished)
            if advanced is None:
                break
            beams = advanced
        return _collect(finished, src_mask, penalty, n_best)


def _advance(beams: _Beams[State], scores: Tensor, weights: Weights | None, length: int,
             finished: list[_Finished]) -> _Beams[State] | None:
    """One search step from the step's log-probabilities (N*K, V) and attention (N*K, S):
    finish hypotheses into `finished`, pick the next beams, drop done sentences.
    Returns the new beams, or None when every sentence is done."""
    batch, beam_size = beams.scores.shape
    vocab = scores.shape[-1]
    totals = (beams.scores.view(-1, 1).to(scores.dtype) + scores).view(batch, -1)  # (N, K*V)
    top, ids = totals.topk(min(2 * beam_size, totals.shape[1]), dim=-1)  # (N, C), best first
    origin = ids.div(vocab, rounding_mode="floor") + beam_size * torch.arange(
        batch, device=ids.device).unsqueeze(1)  # (N, C) the row each candidate extends
    token = ids.remainder(vocab)  # (N, C)
    rank = torch.arange(top.shape[1], device=top.device)
    at_limit = (beams.limits == length).unsqueeze(1)  # (N, 1)
    ends = (token == EOS_ID) | at_limit
    finish = ends & (rank < beam_size) & torch.isfinite(top)  # never finish an empty slot
    if finish.any():
        finished.append(_finish(beams, finish, origin, token, top, weights))
    beams.done = beams.done + finish.sum(-1)
    # The next beam: the K best candidates not ending in EOS (keys are distinct: rank order).
    keep = ((token == EOS_ID).long() * top.shape[1] + rank).argsort(-1)
    keep = keep[:, :beam_size]  # (N, K)
    rows, new_tokens = origin.gather(1, keep), token.gather(1, keep)
    new_scores = top.gather(1, keep)
    alive = beams.live & (beams.done < beam_size) & ~at_limit.squeeze(1)  # (N,)
    if not alive.any():
        return None
    new_scores = new_scores.masked_fill(~alive.unsqueeze(1), float("-inf"))
    shrink = int((~alive).sum()) * 4 >= alive.shape[0]
    if shrink:  # the done sentences leave the batch
        kept = alive.nonzero().squeeze(1)
        rows, new_tokens, new_scores = rows[kept], new_tokens[kept], new_scores[kept]
        beams.sentence, beams.limits = beams.sentence[kept], beams.limits[kept]
        beams.done, alive = beams.done[kept], alive[kept]
    beams.live = alive
    flat = rows.reshape(-1)  # (N'*K,)
    # Rows of one sentence hold equal memory, so reordering it by `flat` keeps the right one.
    beams.state = beams.state.reorder(flat, memory=shrink)
    beams.tokens = torch.cat([beams.tokens[flat], new_tokens.reshape(-1, 1)], 1)
    beams.attention = _extend(beams.attention, weights, flat)
    beams.scores = new_scores
    return beams


def _finish(beams: _Beams[State], finish: Tensor, origin: Tensor, token: Tensor, top: Tensor,
            weights: Weights | None) -> _Finished:
    """The candidates where finish (N, C) is True, with their histories."""
    rows = origin[finish]  # (F,)
    sentence = beams.sentence.unsqueeze(1).expand_as(finish)[finish]
    tokens = torch.cat([beams.tokens[rows], token[finish].unsqueeze(1)], 1)  # (F, t)
    return _Finished(sentence, tokens, top[finish], _extend(beams.attention, weights, rows))


def _extend(history: Weights | None, weights: Weights | None, rows: Tensor) -> Weights | None:
    """history (R, t, S) of the rows extended, each by its step weights (R, S) -> (R', t+1, S);
    local attention's windows stay windows (start (R, t), weights (R, t, W))."""
    if weights is None:
        return None
    new = map_weights(weights, lambda t: t[rows].unsqueeze(1))
    if history is None:
        return new
    return join_weights([map_weights(history, lambda t: t[rows]), new],
                        lambda ts: torch.cat(ts, 1))


def _collect(finished: list[_Finished], src_mask: Tensor, penalty: Penalty,
             n_best: int) -> list[list[Hypothesis]]:
    """Turn the finished chunks into per-sentence Hypothesis lists, best first."""
    sources = src_mask.sum(-1).tolist()
    results: list[list[Hypothesis]] = [[] for _ in sources]
    for chunk in finished:
        length = chunk.tokens.shape[1]
        for row, (sentence, ids, total) in enumerate(zip(
                chunk.sentence.tolist(), chunk.tokens.tolist(), chunk.log_prob.tolist(),
                strict=True)):
            attention = None
            if chunk.attention is not None:  # dense (t, S_real): one returned hypothesis
                attention = row_attention(chunk.attention, row, sources[sentence])
            results[sentence].append(Hypothesis(ids, penalty.score(total, length, attention),
                                                total, attention))
    # sorted() is stable: equal scores keep the order they were found in, whatever the batch.
    return [sorted(hyps, key=lambda h: -h.score)[:n_best] for hyps in results]
