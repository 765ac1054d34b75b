"""Does an LSTMN language model's next word depend on what its self-attention points at? The
faithfulness tests of attnlab.explain.faithfulness, for the intra-attention of the LSTMN
(Cheng, Dong & Lapata 2016) over the model's own earlier states, on one sentence read as the
model was trained (<s> w_1 .. w_n, predicting w_1 .. w_n </s>):

- erasure (Serrano & Smith 2019): at step t zero the weight of the most attended earlier
  position and renormalise the rest: does the most likely next word change? Against zeroing a
  random other earlier position, or the earlier position gradient x input ranks first;
- permutation (Jain & Wallace 2019): shuffle step t's weights over the earlier positions; the
  median total variation distance (TVD) of the next-word distribution over the shuffles;
- agreement: Kendall's tau at step t between the weights and |gradient x input| over the
  earlier positions;
- uniform attention (Wiegreffe & Pinter 2019): equal weight on every earlier position at every
  step, `intervening(model, uniform)` around any reading (attnlab.lm.faithfulness reads the
  test perplexity with it).

Step t (input position t, 0-based, <s> at 0) predicts the word after it from the positions
0..t-1 it attends to. Steps with fewer than two earlier positions (t < 2) are not tested: their
one weight is 1 whatever the model, so there is nothing to erase, rank or compare.

The hook is the top layer's `intervention` (attnlab.models.lstmn), in the decoder's shape, so
attnlab.explain.intervene's edits apply unchanged. A step's attention feeds every later state:
each test edits ONE step per copy of the sentence (copy k at the step steps[k]) and reads the
next-word distribution at that step only, so a sentence costs one pass per test. A stacked
LSTMN's attention is its top layer's (the one its reading figure draws).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import cast

import numpy as np
import torch
from captum.attr import LayerGradientXActivation
from torch import Tensor

from attnlab.data import BOS_ID, EOS_ID
from attnlab.models import LSTMN, LanguageModel
from attnlab.models.attention_layer import Intervention
from attnlab.models.lstmn import LSTMNLayer

from .attribution import frozen
from .faithfulness import ErasureFlips, agreement
from .intervene import RowEdit, at_steps, renormalised_without

FIRST_TESTED = 2   # the first step with two earlier positions to tell apart
PERMUTATIONS = 20  # shuffles per step, as attnlab.explain.faithfulness


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
def intervening(model: LanguageModel, intervention: Intervention) -> Iterator[None]:
    """Within the block the top layer reads `intervention`'s weights (step by step: the fused
    kernel has no hook); restored afterwards."""
    layer = top_layer(model)
    before, layer.intervention = layer.intervention, intervention
    try:
        yield
    finally:
        layer.intervention = before


def distributions(model: LanguageModel, sentence: ForcedSentence, copies: int) -> Tensor:
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


def own_steps(model: LanguageModel, sentence: ForcedSentence) -> tuple[Tensor, Tensor]:
    """The top layer's attention (T, T), row t over the positions < t, and the next-word
    distribution (T, V) of the sentence."""
    out = model.all_positions(sentence.inputs, sentence.mask)
    if out.attention is None:
        raise ValueError("the self-attention tests need an LSTMN language model")
    return out.attention[-1, 0], out.logits[0].softmax(-1)


def log_prob_at(model: LanguageModel, inputs: Tensor, mask: Tensor, targets: Tensor,
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
    chosen = partial(log_prob_at, model)
    with frozen(model):
        per_dim = LayerGradientXActivation(chosen, model.embedding).attribute(
            sentence.inputs.expand(T, T),
            additional_forward_args=(sentence.mask.expand(T, T), sentence.targets.expand(T, T),
                                     rows))                                  # (T, T, E)
    found: np.ndarray = per_dim.sum(-1).detach().double().cpu().numpy()
    return found


def erasure_flips(model: LanguageModel, sentence: ForcedSentence, gradient: np.ndarray,
                  generator: torch.Generator) -> ErasureFlips:
    """Serrano & Smith's test at every tested step: of the steps tested, how many changed their
    most likely next word when the most attended / a random other / the top gradient x input
    earlier position lost its weight (the rest renormalised). `gradient`: gradient_x_input's
    (T, T) for the same sentence."""
    steps = sentence.tested()                                                # (n,)
    n = len(steps)
    if n == 0:
        return ErasureFlips(0, 0, 0, 0)
    device = steps.device
    with torch.no_grad():
        attention, probs = own_steps(model, sentence)
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
            with intervening(model, at_steps(steps, renormalised_without(position))):
                read = at_rows(model, sentence, steps)                        # (n, V)
            flips.append(int((read.argmax(-1) != chosen).sum()))
    return ErasureFlips(n, *flips)


def permutation_tvd(model: LanguageModel, sentence: ForcedSentence, generator: torch.Generator,
                    *, permutations: int = PERMUTATIONS) -> np.ndarray:
    """Jain & Wallace's permutation test at every tested step: the median TVD between the
    next-word distribution and the one read with the step's weights shuffled over its earlier
    positions: (n,)."""
    steps = sentence.tested()
    if len(steps) == 0:
        return np.zeros(0)
    with torch.no_grad():
        probs = own_steps(model, sentence)[1]
        rows = steps.repeat(permutations)               # copy k: step steps[k % n]
        # copy k's order: a shuffle of its step's t earlier positions (the rest unread)
        orders = torch.stack([torch.cat([torch.randperm(t, generator=generator),
                                         torch.arange(t, sentence.steps)])
                              for t in rows.tolist()]).to(rows.device)     # (copies, T)
        with intervening(model, at_steps(rows, shuffled(orders))):
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
