"""Does the output depend on what attention points at? The tests of the literature, written once
over any forced reading (attnlab.explain.forced: a translation pair, an LSTMN sentence), each
at every tested step t, over the K positions step t attends to:

- erasure (Serrano & Smith 2019): zero the weight of the most attended position and
  renormalise; how often does the chosen (most likely) token change, against zeroing a random
  other position, or the position gradient x input ranks first;
- permutation (Jain & Wallace 2019): shuffle the step's weights; the median total variation
  distance (TVD) of the output distribution over the shuffles;
- adversarial attention (Jain & Wallace 2019): the weights farthest from the model's (Jensen-
  Shannon divergence, base 2: 0 to 1) that keep the step's output distribution within a TVD of
  `epsilon`, found by gradient ascent;
- agreement: Kendall's tau between a step's attention and the magnitude of an attribution
  (attnlab.explain.attribution), over the positions.

Each intervention changes one step of one copy of the input (copy c at step rows[c];
attnlab.explain.intervene), so a sentence costs one teacher-forced pass per test, not T.
The uniform-attention baseline (Wiegreffe & Pinter 2019) changes every step of a reading; it is
`intervening(model, uniform)` around it (attnlab.explain.intervene).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import kendalltau
from torch import Tensor

from .attribution import frozen
from .forced import Forced
from .intervene import at_steps, intervening, permuted, renormalised_without, replaced

PERMUTATIONS = 20   # shuffles per step (Jain & Wallace used 100 for a whole instance)
EPSILON = 0.01      # adversarial attention: the most TVD of the output allowed (Jain & Wallace)
ITERATIONS = 100    # adversarial attention: gradient steps


@dataclass(frozen=True)
class ErasureFlips:
    """Steps tested and, of them, how many changed their chosen token when the weight of the
    top attended / a random other / the top gradient x input position was zeroed and the rest
    renormalised."""

    steps: int
    top_attention: int
    random: int
    top_gradient: int


def seen(visible: Tensor, width: int) -> Tensor:
    """(n, width) bool: True at the positions each tested step attends over."""
    return torch.arange(width, device=visible.device) < visible.unsqueeze(1)


def erasure_flips(forced: Forced, gradient: np.ndarray,
                  generator: torch.Generator) -> ErasureFlips:
    """Serrano & Smith's test at every tested step; `gradient` (T, K) a gradient x input
    attribution of the same reading (its magnitude ranks the positions)."""
    steps, visible = forced.tested(), forced.visible()                        # (n,), (n,)
    if len(steps) == 0 or int(visible.min()) < 2:
        return ErasureFlips(0, 0, 0, 0)
    with torch.no_grad():
        attention, probs = forced.own()
        chosen = probs[steps].argmax(-1)                                       # (n,)
        where = seen(visible, attention.shape[1])                              # (n, K)
        top = attention[steps].masked_fill(~where, -math.inf).argmax(-1)       # (n,)
        other = forced.random_other(top, generator)
        ranked = np.where(where.cpu().numpy(), np.abs(gradient[steps.cpu().numpy()]), -np.inf)
        by_gradient = torch.as_tensor(ranked.argmax(-1), device=top.device)
        flips = []
        for position in (top, other, by_gradient):
            with intervening(forced.model, at_steps(steps, renormalised_without(position))):
                changed = forced.read(steps).argmax(-1) != chosen
            flips.append(int(changed.sum()))
    return ErasureFlips(len(steps), *flips)


def permutation_tvd(forced: Forced, generator: torch.Generator, *,
                    permutations: int = PERMUTATIONS) -> np.ndarray:
    """Jain & Wallace's permutation test: per tested step, the median TVD between the output
    distribution and the one read with the step's weights shuffled: (n,)."""
    steps = forced.tested()
    if len(steps) == 0:
        return np.zeros(0)
    with torch.no_grad():
        attention, probs = forced.own()
        rows = steps.repeat(permutations)                   # copy c: step steps[c % n]
        # copy c's order: a shuffle of its step's k positions (the rest unread)
        width = attention.shape[1]
        orders = torch.stack([torch.cat([torch.randperm(k, generator=generator),
                                         torch.arange(k, width)])
                              for k in forced.visible().repeat(permutations).tolist()])
        with intervening(forced.model, at_steps(rows, permuted(orders.to(rows.device)))):
            shuffled = forced.read(rows)                                        # (C, V)
        tvd = 0.5 * (shuffled - probs[rows]).abs().sum(-1)                      # (C,)
    found: np.ndarray = tvd.view(permutations, -1).median(0).values.double().cpu().numpy()
    return found


def adversarial_jsd(forced: Forced, *, epsilon: float = EPSILON,
                    iterations: int = ITERATIONS, seed: int = 0) -> np.ndarray:
    """Jain & Wallace's adversarial attention: per tested step, the largest JSD (base 2) from
    the model's weights found whose output stays within TVD `epsilon` of the model's: (n,)."""
    steps = forced.tested()
    with torch.no_grad():
        attention, probs = forced.own()
        attention, probs = attention[steps], probs[steps]                       # (n, K), (n, V)
    where = seen(forced.visible(), attention.shape[1])
    # a random start, not the model's weights: a peaked row's logits would need many steps
    # to move, and the search is for the farthest weights, wherever they lie
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(attention.shape, generator=generator).to(attention)
    logits = noise.masked_fill(~where, -math.inf).requires_grad_(True)
    optimiser = torch.optim.Adam([logits], lr=0.3)
    best = torch.zeros(len(steps), dtype=torch.float64)
    with frozen(forced.model):  # the weights' logits are what is optimised, never the model
        for _ in range(iterations):
            _adversarial_step(forced, logits, attention, probs, optimiser, best, epsilon)
    result: np.ndarray = best.numpy()
    return result


def _adversarial_step(forced: Forced, logits: Tensor, attention: Tensor, probs: Tensor,
                      optimiser: torch.optim.Optimizer, best: Tensor, epsilon: float) -> None:
    """One ascent step on the JSD of every tested step's weights, penalised beyond TVD
    `epsilon`; `best` (n,) keeps the largest JSD seen within it."""
    steps = forced.tested()
    weights = logits.softmax(-1)                                            # (n, K)
    with intervening(forced.model, at_steps(steps, replaced(weights))):
        moved = forced.read(steps)                                          # (n, V)
    tvd = 0.5 * (moved - probs).abs().sum(-1)
    divergence = jsd(attention, weights)
    feasible = (tvd <= epsilon).detach().cpu()
    best.copy_(torch.where(feasible, torch.maximum(best, divergence.detach().double().cpu()),
                           best))
    loss = (-divergence + 100.0 * torch.relu(tvd - epsilon)).sum()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()


def jsd(p: Tensor, q: Tensor) -> Tensor:
    """Jensen-Shannon divergence in bits of the rows of p and q (..., K): 0 to 1."""
    middle = 0.5 * (p + q)

    def kl(a: Tensor) -> Tensor:
        return torch.where(a > 0, a * (a.clamp_min(1e-30) / middle.clamp_min(1e-30)).log2(),
                           0.0).sum(-1)

    return 0.5 * (kl(p) + kl(q))


def agreement(attention: np.ndarray, attribution: np.ndarray) -> np.ndarray:
    """Kendall's tau (tau-b) per row between attention and |attribution| (rows, K): (rows,),
    NaN where either row is constant (no order to agree with)."""
    taus = []
    for weights, relevance in zip(attention, np.abs(attribution), strict=True):
        if np.ptp(weights) == 0 or np.ptp(relevance) == 0:
            taus.append(math.nan)
        else:
            taus.append(float(kendalltau(weights, relevance).statistic))
    return np.asarray(taus)


def step_agreement(forced: Forced, attention: np.ndarray, attribution: np.ndarray) -> np.ndarray:
    """`agreement` at each tested step over the positions it attends to: (n,)."""
    return np.asarray([agreement(attention[t : t + 1, :k], attribution[t : t + 1, :k])[0]
                       for t, k in zip(forced.tested().tolist(), forced.visible().tolist(),
                                       strict=True)])
