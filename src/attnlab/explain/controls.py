"""Which position the erasure test (attnlab.explain.faithfulness.erasure_flips) erases at each
tested step: the most attended one, and the positions it is held against, one entry each of
ERASED.

Zeroing the most attended position changes more outputs than zeroing a random other one, but a
random other position typically holds a sliver of the weight (for local attention often none:
it lies outside the window), so that comparison sets the top position against almost nothing.
Two controls of comparable weight stand beside it:

- second_attention: the second most attended position;
- random_weighted: a position drawn uniformly among the others holding at least NEGLIGIBLE of
  the step's weight, or the second most attended where no other position holds that much.

The record keeps the weight each erased position held (erasure_flips), so the report says how
comparable a control was. Ties in weight go to the lower position.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .forced import Forced

NEGLIGIBLE = 0.05   # random_weighted draws among the positions holding at least this weight


def seen(visible: Tensor, width: int) -> Tensor:
    """(n, width) bool: True at the positions each tested step attends over."""
    return torch.arange(width, device=visible.device) < visible.unsqueeze(1)


@dataclass(frozen=True)
class Rows:
    """One reading's tested steps as the erasure test sees them: attention (n, K), its weights
    at those steps; where (n, K) bool, the positions each reads; gradient (n, K),
    |gradient x input| there (-inf where unread); generator draws the random other position
    (the reference's draws), draws the later controls' random position."""

    forced: Forced
    attention: Tensor
    where: Tensor
    gradient: Tensor
    generator: torch.Generator
    draws: torch.Generator

    @classmethod
    def of(cls, forced: Forced, attention: Tensor, gradient: np.ndarray,
           generator: torch.Generator, draws: torch.Generator) -> Rows:
        """attention (T, K) and gradient (T, K) over every step of the reading."""
        steps = forced.tested()
        where = seen(forced.visible(), attention.shape[1])                     # (n, K)
        ranked = np.where(where.cpu().numpy(), np.abs(gradient[steps.cpu().numpy()]), -np.inf)
        return cls(forced, attention[steps], where,
                   torch.as_tensor(ranked, device=attention.device), generator, draws)


def ranked(values: Tensor, where: Tensor) -> Tensor:
    """Each row's read positions from the largest value down (ties: the lower position
    first), the unread ones last: values (n, K), where (n, K) bool -> positions (n, K)."""
    return values.masked_fill(~where, -math.inf).sort(dim=-1, descending=True, stable=True).indices


def by_attention(rows: Rows) -> Tensor:
    return ranked(rows.attention, rows.where)


def top_attended(rows: Rows) -> Tensor:
    return by_attention(rows)[:, 0]


def second_attended(rows: Rows) -> Tensor:
    return by_attention(rows)[:, 1]


def random_other(rows: Rows) -> Tensor:
    """A position other than the top one, uniformly: the task's draw (Forced.random_other)."""
    return rows.forced.random_other(top_attended(rows), rows.generator)


def top_gradient(rows: Rows) -> Tensor:
    return rows.gradient.argmax(-1)


def random_weighted(rows: Rows) -> Tensor:
    """Per step, one of the positions other than the top one holding at least NEGLIGIBLE of
    the weight, uniformly (one draw per step, always); the second most attended where there
    is none: (n,)."""
    candidates = rows.where & (rows.attention >= NEGLIGIBLE)                   # (n, K)
    candidates[torch.arange(len(candidates), device=candidates.device), top_attended(rows)] = False
    count = candidates.sum(1)                                                  # (n,)
    draw = torch.rand(len(count), generator=rows.draws, dtype=torch.float64).to(count.device)
    index = (draw * count).long()                          # which candidate: 0 .. count - 1
    rank = candidates.long().cumsum(1) - 1                 # a candidate's index among them
    chosen = (candidates & (rank == index.unsqueeze(1))).long().argmax(1)
    return torch.where(count > 0, chosen, second_attended(rows))


# The position each entry erases at every tested step: (rows) -> (n,). The first three are the
# test as Serrano & Smith ran it; a new control is one function and one line here.
ERASED: dict[str, Callable[[Rows], Tensor]] = {
    "top_attention": top_attended,
    "random": random_other,
    "top_gradient": top_gradient,
    "second_attention": second_attended,
    "random_weighted": random_weighted,
}
