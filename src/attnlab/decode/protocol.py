"""The contract of search: what it needs from a model (start from a source, step one token,
reorder the state) and what it returns (Hypothesis).

Any model with these methods can be decoded by `greedy_search` and `beam_search`: the
translation `Seq2Seq` and the image `Captioner` both implement it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from torch import Tensor

from attnlab.attention import Weights

State = TypeVar("State", bound="SearchState")
MaxLen = int | Callable[[int], int]  # a fixed limit, or one computed from the source length


@dataclass
class Hypothesis:
    """One decoded output of one sentence.

    tokens: target ids, ending with EOS when the hypothesis finished (no EOS when it hit the
    length limit first); log_prob: log p(tokens | source), summed over tokens (an ensemble's:
    the mean of its members'); score: log_prob over the length penalty, plus the coverage
    penalty when asked (Penalty.score: what hypotheses are ranked by); attention
    (len(tokens), S_real): row j is the attention that produced tokens[j], over the sentence's
    real source positions (an ensemble's: its members' mean), or None for a model without
    attention.
    """

    tokens: list[int]
    score: float
    log_prob: float
    attention: Tensor | None


class SearchState(Protocol):
    """A decoder's state for R rows (hypotheses)."""

    def reorder(self: State, index: Tensor, *, memory: bool = False) -> State:
        """Keep/repeat rows: index (R',) into the R rows. The per-sentence memory (keys and their
        projection) is only reordered with `memory=True`, when the set of sentences changes:
        the beams of one sentence share identical memory rows."""
        ...


class Switchable(Protocol):
    """A model with a training flag that eval()/train() switch (dropout, sampling): any
    nn.Module."""

    training: bool

    def eval(self) -> object: ...

    def train(self, mode: bool = True) -> object: ...


class Searchable(Switchable, Protocol[State]):
    """A model search can run. `outputs_log_probs`: whether `step` (and teacher forcing)
    returns log-probabilities rather than logits; a class attribute of every model, True for
    an Ensemble (its members' mean log-probabilities), False for the models that compute
    logits."""

    @property
    def outputs_log_probs(self) -> bool: ...

    def start(self, source: Tensor, source_mask: Tensor) -> State:
        """Encode once: source (B, S, ...) with source_mask (B, S) bool -> the initial state."""
        ...

    def step(self, tokens: Tensor, state: State) -> tuple[Tensor, Weights | None, State]:
        """tokens (R,) -> logits (R, V), attention weights (R, S) (or WindowWeights, start
        (R,) and weights (R, W): local attention) or None, the next state."""
        ...
