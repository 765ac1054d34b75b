"""The faithfulness tests and summaries as they were written before explain/forced.py, twice
(a Seq2Seq decoder's attention, an LSTMN language model's self-attention), kept as the reference
the unified code must reproduce number for number (tests/explain/test_forced.py)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import cast

import numpy as np
import torch
from captum.attr import LayerGradientXActivation
from scipy.stats import kendalltau
from torch import Tensor, nn

from attnlab.attention import as_dense
from attnlab.data import BOS_ID, EOS_ID
from attnlab.explain.attribution import ForcedPair, attribute, forced_pass, frozen
from attnlab.explain.intervene import edited
from attnlab.explain.randomisation import randomised
from attnlab.models import LSTMN, LanguageModel, Seq2Seq
from attnlab.models.attention_layer import Intervention
from attnlab.models.lstmn import LSTMNLayer

RowEdit = Callable[[Tensor, Tensor, Tensor], Tensor]


@contextlib.contextmanager
def intervening(model: Seq2Seq, intervention: Intervention) -> Iterator[None]:
    """Within the block the decoder reads `intervention`'s weights; restored afterwards."""
    layer = model.decoder.attention
    before, layer.intervention = layer.intervention, intervention
    try:
        yield
    finally:
        layer.intervention = before


def at_steps(rows: Tensor, edit: RowEdit) -> Intervention:
    """An intervention that changes batch row b's weights at target step rows[b] only, by
    `edit`, and leaves every other step as the model attends: T copies of one sentence, row t
    edited at step t, test every step in one teacher-forced pass."""

    def intervention(weights: Tensor, mask: Tensor, first: int) -> Tensor:
        offsets = rows - first                                          # (B,)
        hit = (offsets >= 0) & (offsets < weights.shape[1])
        if not bool(hit.any()):
            return weights
        batch = hit.nonzero().squeeze(1)
        where = offsets[batch]
        edited = edit(weights[batch, where], mask[batch], batch)        # (b, S)
        weights = weights.clone()
        weights[batch, where] = edited.to(weights.dtype)
        return weights

    return intervention


def renormalised_without(position: Tensor) -> RowEdit:
    """Zero each row's weight at position[row] and renormalise the rest (Serrano & Smith
    2019's erasure); a row with no weight left keeps its weights."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        dropped = weights.scatter(1, position[batch].unsqueeze(1), 0.0)
        total = dropped.sum(1, keepdim=True)
        return torch.where(total > 0, dropped / total.clamp_min(1e-30), weights)

    return edit


def permuted(orders: Tensor) -> RowEdit:
    """Each row's weights over its real positions reordered by orders[row] (Jain & Wallace
    2019's permutation): orders (B, S) a permutation of the real positions, padding fixed."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return weights.gather(1, orders[batch])

    return edit


def replaced(new_weights: Tensor) -> RowEdit:
    """Each row's weights replaced by new_weights[row] (B, S): adversarial attention."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return new_weights[batch]

    return edit


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
                  generator: torch.Generator) -> tuple[ErasureFlips, list[Tensor]]:
    """Serrano & Smith's test at every step; `gradient` (T, S) a gradient x input attribution
    of the same pair (its magnitude ranks the positions). With the positions erased: top
    attended, random other, top gradient, (T,) each."""
    T, S = pair.steps, pair.positions
    if S < 2:
        return ErasureFlips(0, 0, 0, 0), []
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
    return ErasureFlips(T, *flips), [top, other, by_gradient]


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


FIRST_TESTED = 2   # the first step with two earlier positions to tell apart


@dataclass(frozen=True)
class ForcedSentence:
    """One sentence as the model reads it: inputs (1, T) = <s> w_1 .. w_n, targets (1, T) =
    w_1 .. w_n </s>, mask (1, T) all True."""

    inputs: Tensor
    targets: Tensor
    mask: Tensor

    @classmethod
    def of(cls, ids: Sequence[int], device: torch.device) -> ForcedSentence:
        inputs = torch.tensor([[BOS_ID, *ids]], device=device)
        targets = torch.tensor([[*ids, EOS_ID]], device=device)
        return cls(inputs, targets, torch.ones_like(inputs, dtype=torch.bool))

    @property
    def steps(self) -> int:
        return int(self.inputs.shape[1])

    def tested(self) -> Tensor:
        """The steps tested, t = 2 .. T-1: (n,)."""
        return torch.arange(FIRST_TESTED, self.steps, device=self.inputs.device)


def top_layer(model: LanguageModel) -> LSTMNLayer:
    """The LSTMN's top layer; ValueError for a reader without self-attention."""
    if not isinstance(model.reader, LSTMN):
        raise ValueError("this language model has no self-attention to intervene on")
    return cast(LSTMNLayer, model.reader.layers[-1])


@contextlib.contextmanager
def lm_intervening(model: LanguageModel, intervention: Intervention) -> Iterator[None]:
    """Within the block the top layer reads `intervention`'s weights (step by step: the fused
    kernel has no hook); restored afterwards."""
    layer = top_layer(model)
    before, layer.intervention = layer.intervention, intervention
    try:
        yield
    finally:
        layer.intervention = before


def lm_distributions(model: LanguageModel, sentence: ForcedSentence, copies: int) -> Tensor:
    """p(. | w_<=t) at every step of `copies` copies of the sentence: (copies, T, V), under
    whatever intervention is active."""
    T = sentence.steps
    out = model.all_positions(sentence.inputs.expand(copies, T), sentence.mask.expand(copies, T))
    return out.logits.softmax(-1)


def at_rows(model: LanguageModel, sentence: ForcedSentence, rows: Tensor) -> Tensor:
    """p(. | w_<=t) at one step t = rows[k] of copy k of the sentence: (copies, V), under
    whatever intervention is active; the output layer runs at that step only."""
    T, copies = sentence.steps, len(rows)
    features = model.read(sentence.inputs.expand(copies, T),
                          sentence.mask.expand(copies, T)).outputs           # (copies, T, H)
    return model.output(features[torch.arange(copies, device=rows.device), rows]).softmax(-1)


def lm_own_steps(model: LanguageModel, sentence: ForcedSentence) -> tuple[Tensor, Tensor]:
    """The top layer's attention (T, T), row t over the positions < t, and the next-word
    distribution (T, V) of the sentence."""
    out = model.all_positions(sentence.inputs, sentence.mask)
    if out.attention is None:
        raise ValueError("the self-attention tests need an LSTMN language model")
    return out.attention[-1, 0], out.logits[0].softmax(-1)


def lm_log_prob_at(model: LanguageModel, inputs: Tensor, mask: Tensor, targets: Tensor,
                rows: Tensor) -> Tensor:
    """log p(targets[b, t] | w_<=t) at one step t = rows[b] of each sequence b: (B,). The
    output layer runs at that step only."""
    features = model.read(inputs, mask).outputs                             # (B, T, H)
    batch = torch.arange(features.shape[0], device=features.device)
    scores = model.output(features[batch, rows]).log_softmax(-1)             # (B, V)
    return scores.gather(1, targets[batch, rows].unsqueeze(1)).squeeze(1)


def gradient_x_input(model: LanguageModel, sentence: ForcedSentence) -> np.ndarray:
    """Gradient x input of log p(w_{t+1} | w_<=t) with respect to each position's input
    embedding, summed over the embedding (as attnlab.explain.attribution's): (T, T), row t the
    step, column j the position; columns > t are 0 (the model reads left to right), column t is
    the step's own input word, columns < t the earlier positions its attention reads."""
    T = sentence.steps
    rows = torch.arange(T, device=sentence.inputs.device)   # copy t asks for step t
    chosen = partial(lm_log_prob_at, model)
    with frozen(model):
        per_dim = LayerGradientXActivation(chosen, model.embedding).attribute(
            sentence.inputs.expand(T, T),
            additional_forward_args=(sentence.mask.expand(T, T), sentence.targets.expand(T, T),
                                     rows))                                  # (T, T, E)
    found: np.ndarray = per_dim.sum(-1).detach().double().cpu().numpy()
    return found


def lm_erasure_flips(model: LanguageModel, sentence: ForcedSentence, gradient: np.ndarray,
                  generator: torch.Generator) -> tuple[ErasureFlips, list[Tensor]]:
    """Serrano & Smith's test at every tested step: of the steps tested, how many changed their
    most likely next word when the most attended / a random other / the top gradient x input
    earlier position lost its weight (the rest renormalised). `gradient`: gradient_x_input's
    (T, T) for the same sentence."""
    steps = sentence.tested()                                                # (n,)
    n = len(steps)
    if n == 0:
        return ErasureFlips(0, 0, 0, 0), []
    device = steps.device
    with torch.no_grad():
        attention, probs = lm_own_steps(model, sentence)
        chosen = probs[steps].argmax(-1)                                     # (n,)
        top = torch.stack([attention[t, :t].argmax() for t in steps.tolist()])
        # a random earlier position other than the top one: one of the t - 1 others
        draw = (torch.rand(n, generator=generator, dtype=torch.float64)
                * (steps.cpu() - 1)).long().to(device)
        other = draw + (draw >= top).long()
        by_gradient = torch.as_tensor(
            [int(np.abs(gradient[t, :t]).argmax()) for t in steps.tolist()], device=device)
        flips = []
        for position in (top, other, by_gradient):
            with lm_intervening(model, at_steps(steps, renormalised_without(position))):
                read = at_rows(model, sentence, steps)                        # (n, V)
            flips.append(int((read.argmax(-1) != chosen).sum()))
    return ErasureFlips(n, *flips), [top, other, by_gradient]


def lm_permutation_tvd(model: LanguageModel, sentence: ForcedSentence, generator: torch.Generator,
                    *, permutations: int = PERMUTATIONS) -> np.ndarray:
    """Jain & Wallace's permutation test at every tested step: the median TVD between the
    next-word distribution and the one read with the step's weights shuffled over its earlier
    positions: (n,)."""
    steps = sentence.tested()
    if len(steps) == 0:
        return np.zeros(0)
    with torch.no_grad():
        probs = lm_own_steps(model, sentence)[1]
        rows = steps.repeat(permutations)               # copy k: step steps[k % n]
        # copy k's order: a shuffle of its step's t earlier positions (the rest unread)
        orders = torch.stack([torch.cat([torch.randperm(t, generator=generator),
                                         torch.arange(t, sentence.steps)])
                              for t in rows.tolist()]).to(rows.device)     # (copies, T)
        with lm_intervening(model, at_steps(rows, shuffled(orders))):
            read = at_rows(model, sentence, rows)                           # (copies, V)
        tvd = 0.5 * (read - probs[rows]).abs().sum(-1)
    found: np.ndarray = tvd.view(permutations, -1).median(0).values.double().cpu().numpy()
    return found


def shuffled(orders: Tensor) -> RowEdit:
    """Each row's weights over its t earlier positions reordered by orders[row, :t] (orders
    (copies, T), each row's first t a permutation of 0..t-1)."""

    def edit(weights: Tensor, mask: Tensor, batch: Tensor) -> Tensor:
        return weights.gather(1, orders[batch, : weights.shape[1]])

    return edit


def step_agreement(attention: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """Kendall's tau (tau-b) at each tested step t between the weights and |gradient x input|
    over the positions < t: (n,) for the steps 2 .. T-1, NaN where either is constant."""
    return np.asarray([agreement(attention[t : t + 1, :t], gradient[t : t + 1, :t])[0]
                       for t in range(FIRST_TESTED, len(attention))])


# --- The measures added after explain/forced.py, one step at a time --------------------------
# (controls of comparable weight, ERASER, the randomisation check), written once over a Loop:
# either kind of model read one step at a time, each edit a forward pass of its own.

NEGLIGIBLE = 0.05                  # a control's position holds at least this weight
PERCENTS = (1, 5, 10, 20, 50)      # ERASER's bins, percent of a step's positions


@dataclass(frozen=True)
class Loop:
    """One reading: the steps tested and how many positions each reads, the model's own
    attention (T, K) and distributions (T, V), and read(t, weights (k,)) -> p(. | step t)
    (V,) with step t's weights replaced by `weights` and every other step the model's."""

    tested: list[int]
    visible: list[int]
    own: Callable[[], tuple[Tensor, Tensor]]
    read: Callable[[int, Tensor], Tensor]


def replacing(weights: Tensor) -> RowEdit:
    return lambda found, mask, batch: weights.to(found)[None]


def translation_loop(model: Seq2Seq, pair: ForcedPair) -> Loop:
    def read(t: int, weights: Tensor) -> Tensor:
        with intervening(model, at_steps(torch.tensor([t]), replacing(weights))):
            return distributions(model, pair, 1)[0, t]

    steps = list(range(pair.steps))
    return Loop(steps, [pair.positions] * len(steps), lambda: own_steps(model, pair), read)


def lm_loop(model: LanguageModel, sentence: ForcedSentence) -> Loop:
    def read(t: int, weights: Tensor) -> Tensor:
        with lm_intervening(model, at_steps(torch.tensor([t]), replacing(weights))):
            return at_rows(model, sentence, torch.tensor([t]))[0]

    steps = sentence.tested().tolist()
    return Loop(steps, steps, lambda: lm_own_steps(model, sentence), read)


def by_weight(values: Sequence[float]) -> list[int]:
    """Positions from the largest value down, ties the lower first."""
    return sorted(range(len(values)), key=lambda j: -values[j])


def without(weights: Tensor, position: int) -> Tensor:
    """Serrano & Smith's erasure of one position, a row with no weight left kept."""
    dropped = weights.clone()
    dropped[position] = 0.0
    total = dropped.sum()
    return dropped / total.clamp_min(1e-30) if total > 0 else weights


def kept(weights: Tensor, keep: Sequence[bool]) -> Tensor:
    """Only the kept positions' weights, renormalised; all zero where none is left."""
    found = weights * torch.tensor(keep, dtype=weights.dtype)
    total = found.sum()
    return found / total if total > 0 else found


def controls(loop: Loop, draws: torch.Generator, positions: list[Tensor]) -> tuple[dict, dict]:
    """The flips of the second most attended and of a random position of non-negligible weight
    (else the second), and the weight every erased position held, summed over the steps: the
    old three (`positions`: top, random, top gradient per step) and these two."""
    if not positions:   # nothing tested
        names = ("top_attention", "random", "top_gradient", "second_attention",
                 "random_weighted")
        return {name: 0 for name in names[3:]}, {name: 0.0 for name in names}
    with torch.no_grad():
        attention, probs = loop.own()
        u = torch.rand(len(loop.tested), generator=draws, dtype=torch.float64)
        second, weighted, flips = [], [], {"second_attention": 0, "random_weighted": 0}
        for i, (t, k) in enumerate(zip(loop.tested, loop.visible, strict=True)):
            w = attention[t, :k]
            order = by_weight(w.tolist())
            others = [j for j in range(k) if j != order[0] and w[j] >= NEGLIGIBLE]
            second.append(order[1])
            weighted.append(others[int(u[i] * len(others))] if others else order[1])
            chosen = probs[t].argmax()
            for name, position in (("second_attention", second[-1]),
                                   ("random_weighted", weighted[-1])):
                flips[name] += int(loop.read(t, without(w, position)).argmax() != chosen)
        erased = [*(p.tolist() for p in positions), second, weighted]
        names = ("top_attention", "random", "top_gradient", "second_attention",
                 "random_weighted")
        weight = {name: float(sum(attention[t, j] for t, j in zip(loop.tested, chosen_positions,
                                                                  strict=True)))
                  for name, chosen_positions in zip(names, erased, strict=True)}
    return flips, weight


def eraser(loop: Loop, draws: torch.Generator) -> dict[str, tuple[list[float], list[float]]]:
    """Per ranking (attention, random), ERASER's comprehensiveness and sufficiency per tested
    step: the mean over the bins of p - p(rationale taken away) and p - p(rationale alone)."""
    found: dict[str, tuple[list[float], list[float]]] = {"attention": ([], []),
                                                         "random": ([], [])}
    if not loop.tested or min(loop.visible) < 2:
        return found
    with torch.no_grad():
        attention, probs = loop.own()
        random = torch.rand((len(loop.tested), attention.shape[1]), generator=draws,
                            dtype=torch.float64)
        for name, (comprehensive, sufficient) in found.items():
            for i, (t, k) in enumerate(zip(loop.tested, loop.visible, strict=True)):
                w = attention[t, :k]
                chosen = int(probs[t].argmax())
                own = float(probs[t, chosen])
                order = by_weight((w if name == "attention" else random[i, :k]).tolist())
                away, alone = [], []
                for percent in PERCENTS:
                    top = set(order[: max(1, -(-percent * k // 100))])
                    inside = [j in top for j in range(k)]
                    away.append(own - float(loop.read(t, kept(w, [not x for x in inside]))[chosen]))
                    alone.append(own - float(loop.read(t, kept(w, inside))[chosen]))
                comprehensive.append(sum(away) / len(away))
                sufficient.append(sum(alone) / len(alone))
    return found


def survival(loop: Loop, model: nn.Module, trained: dict[str, np.ndarray],
             explain: Callable[[], dict[str, np.ndarray]],
             draws: torch.Generator) -> dict[str, list[float]]:
    """Per view, Kendall's tau per tested step between the trained model's magnitudes and
    those of the model with randomised weights (the library's draw: the measure is what the
    reference checks), NaN where either row is constant."""
    if not loop.tested:
        return {name: [] for name in trained}
    with randomised(model, draws):
        after = explain()
    found: dict[str, list[float]] = {}
    for name, values in trained.items():
        found[name] = []
        for t, k in zip(loop.tested, loop.visible, strict=True):
            a, b = np.abs(values[t, :k]), np.abs(after[name][t, :k])
            found[name].append(math.nan if np.ptp(a) == 0 or np.ptp(b) == 0
                               else float(kendalltau(a, b).statistic))
    return found


def mean_or_none(values: Sequence[float]) -> float | None:
    finite = [x for x in values if not math.isnan(x)]
    return sum(finite) / len(finite) if finite else None


def add_later(summary: dict, loop: Loop, model: nn.Module, positions: list[Tensor],
              trained: dict[str, np.ndarray], explain: Callable[[], dict[str, np.ndarray]],
              draws: torch.Generator) -> None:
    """The later measures of one reading into `summary`, in the library's order of draws:
    the controls, ERASER, the randomisation check."""
    flips, weight = controls(loop, draws, positions)
    for name, count in flips.items():
        summary["flips"][name].append(count)
    for name, total in weight.items():
        summary["erased_weight"][name].append(total)
    for name, (comprehensive, sufficient) in eraser(loop, draws).items():
        summary["comprehensiveness"][name].append(mean_or_none(comprehensive))
        summary["sufficiency"][name].append(mean_or_none(sufficient))
    for name, taus in survival(loop, model, trained, explain, draws).items():
        summary["randomisation"][name].append(mean_or_none(taus))


def empty_summary(views: Sequence[str], adversarial: bool) -> dict:
    erased = ("top_attention", "random", "top_gradient", "second_attention", "random_weighted")
    summary: dict = {"steps": [], "flips": {name: [] for name in erased},
                     "permutation_tvd": [], "adversarial_jsd": [], "agreement": {},
                     "erased_weight": {name: [] for name in erased},
                     "comprehensiveness": {"attention": [], "random": []},
                     "sufficiency": {"attention": [], "random": []},
                     "randomisation": {name: [] for name in views}}
    if not adversarial:
        del summary["adversarial_jsd"]
    return summary


def translation_summary(model: Seq2Seq, pairs: Sequence[tuple[list[int], list[int]]], *,
                        adversarial: int, methods: Sequence[str], steps: int,
                        seed: int = 0) -> dict:
    """translation/faithfulness.py's loop, the translating left out: pairs of (source ids,
    target ids without EOS)."""
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    draws = torch.Generator().manual_seed(seed + 1)
    names = list(dict.fromkeys(["gradient", *methods]))
    summary = empty_summary(["attention", *names], adversarial=True)
    for index, (source, target) in enumerate(pairs):
        pair = ForcedPair.of(source, target, device)

        def explain(pair: ForcedPair = pair) -> dict[str, np.ndarray]:
            with torch.no_grad():
                found = {"attention": own_steps(model, pair)[0].double().cpu().numpy()}
            return {**found, **{m: attribute(model, pair, m, steps=steps) for m in names}}

        trained = explain()
        gradient = trained["gradient"]
        flips, positions = erasure_flips(model, pair, gradient, generator)
        summary["steps"].append(flips.steps)
        counts = asdict(flips)
        for name in ("top_attention", "random", "top_gradient"):
            summary["flips"][name].append(counts[name])
        summary["permutation_tvd"].append(float(permutation_tvd(model, pair, generator).mean()))
        if index < adversarial:
            summary["adversarial_jsd"].append(
                float(adversarial_jsd(model, pair, seed=seed).mean()))
        attention, _ = forced_pass(model, pair)
        assert attention is not None
        for method in names:
            taus = agreement(attention, trained[method])
            summary["agreement"].setdefault(method, []).append(
                None if np.isnan(taus).all() else float(np.nanmean(taus)))
        add_later(summary, translation_loop(model, pair), model, positions, trained, explain,
                  draws)
    return summary


def lm_summary(model: LanguageModel, sentences: Sequence[Sequence[int]], *,
               seed: int = 0) -> dict:
    """lm/faithfulness.py's loop."""
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    draws = torch.Generator().manual_seed(seed + 1)
    summary = empty_summary(["attention", "gradient"], adversarial=False)
    summary["agreement"]["gradient"] = []
    for ids in sentences:
        sentence = ForcedSentence.of(ids, device)

        def explain(sentence: ForcedSentence = sentence) -> dict[str, np.ndarray]:
            with torch.no_grad():
                attention = lm_own_steps(model, sentence)[0].double().cpu().numpy()
            return {"attention": attention, "gradient": gradient_x_input(model, sentence)}

        trained = explain()
        gradient = trained["gradient"]
        flips, positions = lm_erasure_flips(model, sentence, gradient, generator)
        summary["steps"].append(flips.steps)
        counts = asdict(flips)
        for name in ("top_attention", "random", "top_gradient"):
            summary["flips"][name].append(counts[name])
        tvd = lm_permutation_tvd(model, sentence, generator)
        summary["permutation_tvd"].append(float(tvd.mean()) if tvd.size else None)
        taus = step_agreement(trained["attention"], gradient)
        summary["agreement"]["gradient"].append(
            None if np.isnan(taus).all() else float(np.nanmean(taus)))
        add_later(summary, lm_loop(model, sentence), model, positions, trained, explain, draws)
    return summary


def full_pass_read(forced, rows, edit=None):
    """ForcedTranslation.read as first written: every copy encodes the source and runs the whole
    target under the edit at its own step, and the output layer runs at every position;
    p(. | step rows[c]) of copy c (C, V)."""
    pair, model, copies = forced.pair, forced.model, len(rows)
    S = pair.positions
    with edited(model, rows, edit, forced.layer):
        out = model.all_positions(pair.src.expand(copies, S), pair.src_mask.expand(copies, S),
                                  pair.tgt_in.expand(copies, -1))
    probs = out.logits.exp() if model.outputs_log_probs else out.logits.softmax(-1)
    return probs[torch.arange(copies), rows]
