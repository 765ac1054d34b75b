"""What every attention mechanism shares: a built Score, the key projection done once per source
sentence, one call shape, and the output dataclass.

    mechanism.attend(query, keys, values=None, mask=None, *, projected_keys=None, first_step=0)
        -> AttentionOutput(context, weights, sample)
    mechanism.attend_compact(...) -> the same, weights in the mechanism's most compact form
    mechanism(query, keys, values=None, mask=None, *, projected_keys=None) -> (context, weights)

query (B, Tq, Dq) or one step (B, Dq); keys (B, Tk, Dk); values (B, Tk, Dv), default the keys;
mask (B, Tk) or (B, Tq, Tk) bool, True = real key. `first_step` is the target position of the
first query: local-m centres its window on it; `generator` is the random source of mechanisms that
sample (hard attention). Mechanisms that do not look at positions or sample ignore them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import torch
from torch import Tensor, nn

from .core import as_query_sequence, check_keys_values, key_mask_for_scores
from .scores import Score, ScoreDims, build_score
from .window_weights import Weights, as_dense, join_weights, map_weights


@dataclass
class HardSample:
    """What one hard-attention call drew; every field is (B, Tq).

    index: the chosen key (sampled in training, argmax in eval); log_prob: log alpha at index,
    0 where the expectation was used or the query had no real key; entropy: H[alpha_t];
    expectation: True where the soft expectation replaced the sample.
    """

    index: Tensor
    log_prob: Tensor
    entropy: Tensor
    expectation: Tensor


@dataclass
class AttentionOutput:
    """context (B, Tq, Dv); weights (B, Tq, Tk), or WindowWeights (start (B, Tq), weights
    (B, Tq, W)) from `attend_compact` of local attention; sample: what hard attention drew,
    else None. For a one-step query the Tq axis is absent from every field."""

    context: Tensor
    weights: Weights
    sample: HardSample | None = None

    @classmethod
    def cat(cls, parts: list[AttentionOutput]) -> AttentionOutput:
        """Outputs of consecutive query chunks, each (B, t, ...) -> one (B, sum t, ...)."""
        if len(parts) == 1:  # one decoder step: nothing to join, no copy on the hot path
            return parts[0]
        return cls._combine(parts, lambda tensors: torch.cat(tensors, dim=1))

    @classmethod
    def stack(cls, steps: list[AttentionOutput]) -> AttentionOutput:
        """Outputs of T one-step calls, each (B, ...) -> one (B, T, ...)."""
        return cls._combine(steps, lambda tensors: torch.stack(tensors, dim=1))

    @classmethod
    def _combine(cls, parts: list[AttentionOutput],
                 join: Callable[[list[Tensor]], Tensor]) -> AttentionOutput:
        sample = None
        if parts[0].sample is not None:
            sample = HardSample(*(join([getattr(p.sample, f.name) for p in parts])
                                  for f in fields(HardSample)))
        return cls(join([p.context for p in parts]),
                   join_weights([p.weights for p in parts], join), sample)

    def squeeze_step(self) -> AttentionOutput:
        """Drop the length-1 query axis of a one-step call."""
        sample = self.sample
        if sample is not None:
            sample = HardSample(*(getattr(sample, f.name).squeeze(1) for f in fields(sample)))
        return AttentionOutput(self.context.squeeze(1),
                               map_weights(self.weights, lambda t: t.squeeze(1)), sample)


@dataclass
class Position:
    """Where a call sits and what it may draw from: first_step, the target position of the first
    query (local-m); generator, the random source of sampling mechanisms (hard attention)."""

    first_step: int | Tensor = 0
    generator: torch.Generator | None = None


def resolve_score(score: Score | str, dims: dict[str, Any]) -> Score:
    """A built Score as it is, or the score a SCORES name means, built for `dims` (query_dim,
    key_dim, hidden_dim, max_len, sharpness): the convenience form Attention("additive", ...)."""
    if isinstance(score, Score):
        if dims:
            raise TypeError(f"score sizes ({', '.join(dims)}) go with a score name; this "
                            f"{score.name} score is already built")
        return score
    return build_score(score, ScoreDims(**dims))


class Mechanism(nn.Module):
    """Base of Attention, LocalAttention and HardAttention: checks inputs once, then hands a
    (B, Tq, Dq) query to `attend_sequence`. Each has a `score` (a submodule, or a property).

    What a mechanism is, asked of it (or of its class, before one is built): `samples`, whether
    training draws the attended position (hard attention: its weights are a distribution the
    context is sampled from, and training needs REINFORCE); `local`, whether it attends
    within a window around a source position (local-m, local-p: it reads a sequence left to
    right, not an image grid).
    """

    samples: ClassVar[bool] = False
    local: ClassVar[bool] = False
    # how it reads in eval mode: only a mechanism that samples reads another way (set_eval_mode)
    eval_mode: Literal["expectation", "argmax"] = "expectation"

    def set_eval_mode(self, mode: Literal["expectation", "argmax"]) -> None:
        """How a mechanism that samples reads in eval mode (see HardAttention); the others
        read one way only and ignore it."""

    if TYPE_CHECKING:
        @property
        def score(self) -> Score: ...

    @property
    def who(self) -> str:
        return f"{type(self).__name__}({self.score.name!r})"

    def project_keys(self, keys: Tensor) -> Tensor:
        """The key-side work, done once per source sentence: (B, Tk, Dk) -> (B, Tk, H)."""
        self.score.check_dims(None, keys)
        return self.score.project_keys(keys)

    def attend(self, query: Tensor, keys: Tensor, values: Tensor | None = None,
               mask: Tensor | None = None, *, projected_keys: Tensor | None = None,
               first_step: int | Tensor = 0,
               generator: torch.Generator | None = None) -> AttentionOutput:
        """The full result, extras included, weights dense (B, Tq, Tk); shapes in the module
        docstring."""
        return self._attend(self.attend_sequence, query, keys, values, mask, projected_keys,
                            Position(first_step, generator))

    def attend_compact(self, query: Tensor, keys: Tensor, values: Tensor | None = None,
                       mask: Tensor | None = None, *, projected_keys: Tensor | None = None,
                       first_step: int | Tensor = 0,
                       generator: torch.Generator | None = None) -> AttentionOutput:
        """As `attend`, with the weights in the most compact form the mechanism has: local
        attention's WindowWeights (no (B, Tq, Tk) tensor is built), others' dense weights."""
        return self._attend(self.compact_sequence, query, keys, values, mask, projected_keys,
                            Position(first_step, generator))

    def _attend(self, run: Callable[..., AttentionOutput], query: Tensor, keys: Tensor,
                values: Tensor | None, mask: Tensor | None, projected_keys: Tensor | None,
                call: Position) -> AttentionOutput:
        query, is_step = as_query_sequence(query, self.who)  # (B, Tq, Dq)
        values, key_mask, projected_keys = self.checked(query, keys, values, mask, projected_keys)
        out = run(query, keys, values, key_mask, projected_keys, call)
        return out.squeeze_step() if is_step else out

    def checked(self, query: Tensor, keys: Tensor, values: Tensor | None, mask: Tensor | None,
                projected_keys: Tensor | None) -> tuple[Tensor, Tensor | None, Tensor]:
        """Check a (B, Tq, Dq) query against the keys -> values (default the keys), the key mask
        shaped (B, 1|Tq, Tk) (or None), and the projected keys (computed when not given)."""
        values = keys if values is None else values
        check_keys_values(keys, values, query.shape[0], self.who)
        self.score.check_dims(query, keys)
        key_mask = key_mask_for_scores(mask, keys, query.shape[1], self.who)
        if projected_keys is None:
            projected_keys = self.score.project_keys(keys)  # (B, Tk, H)
        return values, key_mask, projected_keys

    def attend_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                        key_mask: Tensor | None, projected_keys: Tensor,
                        call: Position) -> AttentionOutput:
        """query (B, Tq, Dq), checked inputs, key_mask (B, 1|Tq, Tk) or None."""
        raise NotImplementedError

    def compact_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                         key_mask: Tensor | None, projected_keys: Tensor,
                         call: Position) -> AttentionOutput:
        """`attend_sequence` with compact weights; the mechanisms with windows override it."""
        return self.attend_sequence(query, keys, values, key_mask, projected_keys, call)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor | None = None,
                mask: Tensor | None = None, *,
                projected_keys: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out = self.attend(query, keys, values, mask, projected_keys=projected_keys)
        return out.context, as_dense(out.weights)  # dense already: `attend` builds no windows
