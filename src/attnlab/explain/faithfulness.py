"""Does the output depend on what attention points at? The tests of the literature, each on one
sentence pair whose target is forced (usually the model's own translation, so "the chosen
token" at step t is the one it wrote):

- erasure (Serrano & Smith 2019): zero the weight of the most attended source position at one
  step and renormalise; how often does the chosen token change, against zeroing a random other
  position, or the position gradient x input ranks first;
- permutation (Jain & Wallace 2019): shuffle a step's weights over the source; the median total
  variation distance (TVD) of the output distribution over the shuffles;
- adversarial attention (Jain & Wallace 2019): the weights farthest from the model's (Jensen-
  Shannon divergence, base 2: 0 to 1) that keep the step's output distribution within a TVD of
  `epsilon`, found by gradient ascent;
- agreement: Kendall's tau between a step's attention and the magnitude of an attribution
  (attnlab.explain.attribution), over the source positions.

Each intervention changes one step of one batch row (T copies of the sentence, row t at step t;
attnlab.explain.intervene), so a sentence costs one teacher-forced pass per test, not T.
The uniform-attention baseline (Wiegreffe & Pinter 2019) changes every step of a decoding; it is
`intervening(model, uniform)` around a translation (attnlab.explain.intervene).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import kendalltau
from torch import Tensor

from attnlab.attention import as_dense
from attnlab.models import Seq2Seq

from .attribution import ForcedPair, frozen
from .intervene import at_steps, intervening, permuted, renormalised_without, replaced

PERMUTATIONS = 20   # shuffles per step (Jain & Wallace used 100 for a whole instance)
EPSILON = 0.01      # adversarial attention: the most TVD of the output allowed (Jain & Wallace)
ITERATIONS = 100    # adversarial attention: gradient steps


@dataclass(frozen=True)
class ErasureFlips:
    """Steps tested (those with at least two source positions) and, of them, how many changed
    their chosen token when the weight of the top attended / a random other / the top
    gradient x input position was zeroed and the rest renormalised."""

    steps: int
    top_attention: int
    random: int
    top_gradient: int


def distributions(model: Seq2Seq, pair: ForcedPair, copies: int) -> Tensor:
    """p(. | y_<t, x) at every step of `copies` copies of the pair: (copies, T, V), under
    whatever intervention is active."""
    S = pair.positions
    out = model.all_positions(pair.src.expand(copies, S), pair.src_mask.expand(copies, S),
                              pair.tgt_in.expand(copies, -1))
    return out.logits.exp() if model.outputs_log_probs else out.logits.softmax(-1)


def own_steps(model: Seq2Seq, pair: ForcedPair) -> tuple[Tensor, Tensor]:
    """The model's attention (T, S) and output distribution (T, V) on the forced pair."""
    out = model.all_positions(pair.src, pair.src_mask, pair.tgt_in)
    if out.attention is None:
        raise ValueError("the faithfulness tests need a model with attention")
    probs = out.logits.exp() if model.outputs_log_probs else out.logits.softmax(-1)
    return as_dense(out.attention, pair.positions)[0], probs[0]


def erasure_flips(model: Seq2Seq, pair: ForcedPair, gradient: np.ndarray,
                  generator: torch.Generator) -> ErasureFlips:
    """Serrano & Smith's test at every step; `gradient` (T, S) a gradient x input attribution
    of the same pair (its magnitude ranks the positions)."""
    T, S = pair.steps, pair.positions
    if S < 2:
        return ErasureFlips(0, 0, 0, 0)
    with torch.no_grad():
        attention, probs = own_steps(model, pair)
        chosen = probs.argmax(-1)                                          # (T,)
        top = attention.argmax(-1)                                         # (T,)
        other = torch.randint(0, S - 1, (T,), generator=generator).to(top.device)
        other = other + (other >= top).long()                              # never the top one
        by_gradient = torch.as_tensor(np.abs(gradient).argmax(-1), device=top.device)
        steps = torch.arange(T, device=top.device)
        flips = []
        for position in (top, other, by_gradient):
            with intervening(model, at_steps(steps, renormalised_without(position))):
                changed = distributions(model, pair, T)[steps, steps].argmax(-1) != chosen
            flips.append(int(changed.sum()))
    return ErasureFlips(T, *flips)


def permutation_tvd(model: Seq2Seq, pair: ForcedPair, generator: torch.Generator, *,
                    permutations: int = PERMUTATIONS) -> np.ndarray:
    """Jain & Wallace's permutation test: per step, the median TVD between the output
    distribution and the one read with the step's weights shuffled: (T,)."""
    T, S = pair.steps, pair.positions
    with torch.no_grad():
        _, probs = own_steps(model, pair)
        copies = T * permutations
        rows = torch.arange(T, device=probs.device).repeat(permutations)  # copy k -> step k % T
        orders = torch.stack([torch.randperm(S, generator=generator)
                              for _ in range(copies)]).to(probs.device)     # (copies, S)
        with intervening(model, at_steps(rows, permuted(orders))):
            shuffled = distributions(model, pair, copies)[torch.arange(copies), rows]
        tvd = 0.5 * (shuffled - probs[rows]).abs().sum(-1)                  # (copies,)
    found: np.ndarray = tvd.view(permutations, T).median(0).values.double().cpu().numpy()
    return found


def adversarial_jsd(model: Seq2Seq, pair: ForcedPair, *, epsilon: float = EPSILON,
                    iterations: int = ITERATIONS, seed: int = 0) -> np.ndarray:
    """Jain & Wallace's adversarial attention: per step, the largest JSD (base 2) from the
    model's weights found whose output stays within TVD `epsilon` of the model's: (T,)."""
    T = pair.steps
    with torch.no_grad():
        attention, probs = own_steps(model, pair)
    real = pair.src_mask[0]                                                 # (S,)
    # a random start, not the model's weights: a peaked row's logits would need many steps
    # to move, and the search is for the farthest weights, wherever they lie
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(attention.shape, generator=generator).to(attention)
    logits = noise.masked_fill(~real, -math.inf).requires_grad_(True)
    optimiser = torch.optim.Adam([logits], lr=0.3)
    best = torch.zeros(T, dtype=torch.float64)
    with frozen(model):  # the weights' logits are what is optimised, never the model
        for _ in range(iterations):
            _adversarial_step(model, pair, logits, attention, probs, optimiser, best, epsilon)
    found: np.ndarray = best.numpy()
    return found


def _adversarial_step(model: Seq2Seq, pair: ForcedPair, logits: Tensor, attention: Tensor,
                      probs: Tensor, optimiser: torch.optim.Optimizer, best: Tensor,
                      epsilon: float) -> None:
    """One ascent step on the JSD of every step's weights, penalised beyond TVD `epsilon`;
    `best` (T,) keeps the largest JSD seen within it."""
    steps = torch.arange(pair.steps, device=attention.device)
    weights = logits.softmax(-1)                                            # (T, S)
    with intervening(model, at_steps(steps, replaced(weights))):
        moved = distributions(model, pair, pair.steps)[steps, steps]       # (T, V)
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
    """Jensen-Shannon divergence in bits of the rows of p and q (..., S): 0 to 1."""
    middle = 0.5 * (p + q)

    def kl(a: Tensor) -> Tensor:
        return torch.where(a > 0, a * (a.clamp_min(1e-30) / middle.clamp_min(1e-30)).log2(),
                           0.0).sum(-1)

    return 0.5 * (kl(p) + kl(q))


def agreement(attention: np.ndarray, attribution: np.ndarray) -> np.ndarray:
    """Kendall's tau (tau-b) per step between attention and |attribution| (T, S) over the
    source positions: (T,), NaN where either row is constant (no order to agree with)."""
    taus = []
    for weights, relevance in zip(attention, np.abs(attribution), strict=True):
        if np.ptp(weights) == 0 or np.ptp(relevance) == 0:
            taus.append(math.nan)
        else:
            taus.append(float(kendalltau(weights, relevance).statistic))
    return np.asarray(taus)
