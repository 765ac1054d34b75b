"""ERASER's comprehensiveness and sufficiency (DeYoung et al. 2020) at every tested step of any
forced reading (attnlab.explain.forced), the step's positions ranked by attention and, as the
baseline, at random: one entry each of RANKINGS.

A ranking's top k positions at a step are its rationale r_k. With p = p(y^ | step), the
probability of the step's chosen (most likely) token under the model's own weights,

    comprehensiveness = mean over the bins of  p - p(y^ | r_k's weights zeroed, rest renormalised)
    sufficiency       = mean over the bins of  p - p(y^ | r_k's weights alone, renormalised)

k taking DeYoung et al.'s bins, 1, 5, 10, 20 and 50% of the step's K positions (rounded up, at
least one): the area over the perturbation curve (AOPC) that they report. High comprehensiveness:
the output needs the rationale; low (even negative) sufficiency: the rationale alone keeps the
output. A ranking that means something beats the random one on both.

The positions are taken away from attention, not from the input: each edit changes one step's
weights (attnlab.explain.intervene), so every encoder state still reads the whole sentence and
no embedding is zeroed (docs/explain.md, "Two caveats"). A step left with no weight reads a zero
context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .controls import ranked, seen
from .forced import Forced
from .intervene import renormalised_over

PERCENTS = (1, 5, 10, 20, 50)   # the bins: shares of a step's positions (DeYoung et al. 2020)


def bin_sizes(visible: Tensor) -> Tensor:
    """The rationale's size k per tested step and bin, ceil(percent x K / 100) and at least 1,
    in integers (0.1 x 30 is 3.0000000000000004 in floating point): (n, bins)."""
    percents = torch.tensor(PERCENTS, device=visible.device)
    return (-(-percents * visible.unsqueeze(1) // 100)).clamp_min(1)


def at_random(attention: Tensor, where: Tensor, generator: torch.Generator) -> Tensor:
    """Each step's read positions in a uniformly random order, unread last: (n, K)."""
    draw = torch.rand(attention.shape, generator=generator, dtype=torch.float64)
    return ranked(draw.to(attention.device), where)


# A ranking of each tested step's positions: (attention (n, K), where, generator) -> (n, K).
RANKINGS: dict[str, Callable[[Tensor, Tensor, torch.Generator], Tensor]] = {
    "attention": lambda attention, where, generator: ranked(attention, where),
    "random": at_random,
}


@dataclass(frozen=True)
class Aopc:
    """One ranking's comprehensiveness and sufficiency at each tested step: (n,) each."""

    comprehensiveness: np.ndarray
    sufficiency: np.ndarray


def eraser(forced: Forced, generator: torch.Generator) -> dict[str, Aopc]:
    """Comprehensiveness and sufficiency of every ranking of RANKINGS at each tested step
    (none where a step reads fewer than two positions, as the erasure test)."""
    steps, visible = forced.tested(), forced.visible()
    if len(steps) == 0 or int(visible.min()) < 2:
        return {name: Aopc(np.zeros(0), np.zeros(0)) for name in RANKINGS}
    with torch.no_grad():
        attention, probs = forced.own()
        chosen = probs[steps].argmax(-1)                                       # (n,)
        own = probs[steps].gather(1, chosen.unsqueeze(1)).squeeze(1)           # (n,)
        where = seen(visible, attention.shape[1])                              # (n, K)
        return {name: _aopc(forced, rank(attention[steps], where, generator), where, chosen, own)
                for name, rank in RANKINGS.items()}


def _aopc(forced: Forced, order: Tensor, where: Tensor, chosen: Tensor, own: Tensor) -> Aopc:
    """One ranking's figures: order (n, K) its positions per step, where (n, K) the positions
    read, chosen (n,) the token, own (n,) its probability under the model's weights. Copy
    c = b n + i of the input is step i with bin b's rationale taken away, or kept alone."""
    steps = forced.tested()
    sizes = bin_sizes(forced.visible())                                        # (n, B)
    bins, (n, width) = sizes.shape[1], where.shape
    place = order.argsort(-1)                          # (n, K): each position's place in it
    top = (place.unsqueeze(1) < sizes.unsqueeze(2)).transpose(0, 1).reshape(bins * n, width)
    rows = steps.repeat(bins)                                                  # (B n,)
    found = []
    for keep in (where.repeat(bins, 1) & ~top, top):      # taken away; then kept alone
        read = forced.read(rows, renormalised_over(keep))
        read = read.gather(1, chosen.repeat(bins).unsqueeze(1)).squeeze(1)
        drop = (own.repeat(bins) - read).view(bins, n).mean(0)                 # (n,)
        found.append(drop.double().cpu().numpy())
    return Aopc(*found)
