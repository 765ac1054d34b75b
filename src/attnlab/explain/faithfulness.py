"""Does the output depend on what attention points at? The tests of the literature, written once
over any forced reading (attnlab.explain.forced: a translation pair, an LSTMN sentence), each
at every tested step t, over the K positions step t attends to:

- erasure (Serrano & Smith 2019): zero the weight of the most attended position and
  renormalise; how often does the chosen (most likely) token change, against zeroing a random
  other position, the position gradient x input ranks first, and two positions of comparable
  weight: the second most attended, and a random one of those with non-negligible weight
  (attnlab.explain.controls, one entry each of ERASED);
- permutation (Jain & Wallace 2019): shuffle the step's weights; the median total variation
  distance (TVD) of the output distribution over the shuffles;
- adversarial attention (Jain & Wallace 2019): the weights farthest from the model's (Jensen-
  Shannon divergence, base 2: 0 to 1) that keep the step's output distribution within a TVD of
  `epsilon`, found by gradient ascent;
- agreement: Kendall's tau between a step's attention and the magnitude of an attribution
  (attnlab.explain.attribution), over the positions.

Each intervention changes one step of one copy of the input (copy c at step rows[c]: `edit`
of the reading's `read`, attnlab.explain.intervene), so what comes before that step is the
model's own: a translation reads each copy as one decoder step from its kept state
(attnlab.explain.forced), an LSTMN sentence as one pass of all copies.
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
from .controls import ERASED, Rows, seen
from .forced import Forced
from .intervene import permuted, renormalised_without, replaced

PERMUTATIONS = 20   # shuffles per step (Jain & Wallace used 100 for a whole instance)
EPSILON = 0.01      # adversarial attention: the most TVD of the output allowed (Jain & Wallace)
ITERATIONS = 100    # adversarial attention: gradient steps


@dataclass(frozen=True)
class ErasureFlips:
    """Steps tested and, per entry of ERASED (attnlab.explain.controls), how many of them
    changed their chosen token when that position's weight was zeroed and the rest
    renormalised (`flips`), and the attention weight it held, summed over the steps
    (`weight`). `found.top_attention` is found.flips["top_attention"]."""

    steps: int
    flips: dict[str, int]
    weight: dict[str, float]

    def __getattr__(self, name: str) -> int:
        counts = self.__dict__.get("flips", {})
        if name not in counts:
            raise AttributeError(name)
        return int(counts[name])


def erasure_flips(forced: Forced, gradient: np.ndarray, generator: torch.Generator,
                  draws: torch.Generator | None = None) -> ErasureFlips:
    """Serrano & Smith's test at every tested step, erasing each entry of ERASED's position in
    turn; `gradient` (T, K) a gradient x input attribution of the same reading (its magnitude
    ranks the positions); `generator` draws the random other position, `draws` (default the
    same generator) the random position of non-negligible weight."""
    steps, visible = forced.tested(), forced.visible()                        # (n,), (n,)
    if len(steps) == 0 or int(visible.min()) < 2:
        return ErasureFlips(0, dict.fromkeys(ERASED, 0), dict.fromkeys(ERASED, 0.0))
    with torch.no_grad():
        attention, probs = forced.own()
        chosen = probs[steps].argmax(-1)                                       # (n,)
        rows = Rows.of(forced, attention, gradient, generator, draws or generator)
        flips, weight = {}, {}
        for name, choose in ERASED.items():
            position = choose(rows)                                            # (n,)
            erased = forced.read(steps, renormalised_without(position))
            flips[name] = int((erased.argmax(-1) != chosen).sum())
            weight[name] = float(rows.attention.gather(1, position.unsqueeze(1)).sum())
    return ErasureFlips(len(steps), flips, weight)


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
        shuffled = forced.read(rows, permuted(orders.to(rows.device)))          # (C, V)
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
    moved = forced.read(steps, replaced(weights))                           # (n, V)
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
