"""Several models decoded as one: an Ensemble is itself a `Searchable`, so greedy and beam search
run on it unchanged.

Each step feeds every member the same token and scores the next token by the mean of the
members' log-probabilities (as OpenNMT-py's ensembles do; not renormalised, so a hypothesis's
log_prob is the mean of what each member gives it). The attention of a step is the mean of the
members' weights (over the members that attend); each member's own comes from a forced decode
of the found tokens (`member_attention`), since search needs only the mean. The members must
share the target vocabulary (and, for the attention to mean anything, the source one): the
loading that builds an ensemble checks that, since ids alone cannot tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from attnlab.attention import Weights, as_dense, join_weights, max_positions
from attnlab.data import BOS_ID
from attnlab.models.decoder_base import DecoderOutput

from .common import evaluating, log_probs, next_token_scores, row_attention


@dataclass
class EnsembleState:
    """The members' own states, in member order; beams reorder every one of them."""

    members: tuple[Any, ...]

    def reorder(self, index: Tensor, *, memory: bool = False) -> EnsembleState:
        return EnsembleState(tuple(state.reorder(index, memory=memory)
                                   for state in self.members))


def mean_attention(weights: Sequence[Weights | None]) -> Weights | None:
    """The mean of the members' attention that is not None (any shape), or None. One member's
    windows stay windows; the mean of several local members' windows is no window and is
    densified (..., S) (so an ensemble of local models over a long source is not linear)."""
    present = [w for w in weights if w is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return torch.stack([as_dense(w) for w in present]).mean(0)


class Ensemble(nn.Module):
    """Members (nn.Modules with start / step / reorder, e.g. Seq2Seq) decoded together.

    start(src, src_mask) -> EnsembleState; step(tokens (R,), state) -> (scores (R, V): the mean
    of the members' next-token log-probabilities, attention (R, S) their mean, state);
    all_positions(src, src_mask, tgt_in) -> DecoderOutput whose `logits` are the mean
    log-probabilities (B, T, V) (teacher forcing, when the members have all_positions).
    """

    outputs_log_probs = True  # step returns log-probabilities, not logits (see step_scores)

    def __init__(self, members: Sequence[nn.Module]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)

    @property
    def max_source_length(self) -> int | None:
        """The most source positions (EOS included) every member can read, or None when any
        length can be read (see Seq2Seq.max_source_length)."""
        return max_positions(self)

    @property
    def searchable(self) -> list[Any]:
        """The members, typed for their search methods (start, step, all_positions)."""
        return list(self.members)

    def start(self, source: Tensor, source_mask: Tensor) -> EnsembleState:
        return EnsembleState(tuple(member.start(source, source_mask) for member in self.searchable))

    def step(self, tokens: Tensor, state: EnsembleState
             ) -> tuple[Tensor, Weights | None, EnsembleState]:
        scores: list[Tensor] = []
        weights: list[Weights | None] = []
        states = []
        for member, member_state in zip(self.searchable, state.members, strict=True):
            logits, attention, next_state = member.step(tokens, member_state)
            scores.append(next_token_scores(logits))
            weights.append(attention)
            states.append(next_state)
        _same_vocabulary(scores)
        return torch.stack(scores).mean(0), mean_attention(weights), EnsembleState(tuple(states))

    def all_positions(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> DecoderOutput:
        """Teacher forcing at every position: the members' mean log-probabilities (B, T, V)
        as `logits` (log_softmax leaves them as they are only up to a constant per row: use
        them as scores) and their mean attention (B, T, S)."""
        outputs = [member.all_positions(src, src_mask, tgt_in) for member in self.searchable]
        scores = [log_probs(out.logits) for out in outputs]
        _same_vocabulary(scores)
        return DecoderOutput(torch.stack(scores).mean(0),
                             mean_attention([out.attention for out in outputs]))


def _same_vocabulary(scores: list[Tensor]) -> None:
    sizes = sorted({score.shape[-1] for score in scores})
    if len(sizes) > 1:
        raise ValueError(f"ensemble members have different target vocabulary sizes {sizes}")


def member_attention(ensemble: Ensemble, src: Tensor, src_mask: Tensor,
                     tokens: Sequence[Sequence[int]]) -> list[list[Tensor | None]]:
    """Each member's own attention over the hypotheses `tokens` (one list of ids per row of
    src (B, S)), by stepping every member through them (a forced decode, in eval mode):
    per row, per member, (len(tokens), S_real) or None for a member without attention."""
    found: list[list[Tensor | None]] = [[] for _ in tokens]
    longest = max((len(ids) for ids in tokens), default=0)
    inputs = src.new_full((len(tokens), longest), BOS_ID)  # BOS, then each hypothesis's tokens
    for row, ids in enumerate(tokens):
        inputs[row, 1 : len(ids)] = torch.tensor(list(ids[:-1]), dtype=src.dtype)
    sources = src_mask.sum(-1).tolist()
    with evaluating(ensemble):
        for member in ensemble.searchable:
            state, steps = member.start(src, src_mask), []
            for t in range(longest):
                _, weights, state = member.step(inputs[:, t], state)
                steps.append(weights)
            present = [step for step in steps if step is not None]
            history = (join_weights(present, lambda ts: torch.stack(ts, 1))  # (B, T, ...)
                       if present and len(present) == len(steps) else None)
            for row, ids in enumerate(tokens):
                found[row].append(None if history is None else  # (T, S_real)
                                  row_attention(history, row, sources[row], steps=len(ids)))
    return found
