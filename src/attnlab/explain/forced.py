"""A model reading a fixed input and a fixed output: the one object every faithfulness test
reads (attnlab.explain.faithfulness), for either kind of attention there is to test.

- ForcedTranslation: a Seq2Seq model reading a (source, target) pair, target forced (teacher
  forcing in eval mode); step t writes target token t from the S source positions.
- ForcedSentence: an LSTMN language model reading one sentence as it was trained (<s> w_1 ..
  w_n, predicting w_1 .. w_n </s>); step t predicts the word after input t from the t earlier
  positions its top layer attends to (Cheng, Dong & Lapata 2016). Steps t < 2 are not tested:
  their one weight is 1 whatever the model, so there is nothing to erase, rank or compare.

Each gives its attention (T, K) and output distributions (T, V), the distribution at one step
per copy of the input under whatever intervention is active (attnlab.explain.intervene), the
steps tested and how many positions each reads, and its attributions (T, K).

Each reads one attention layer, `layer` (attnlab.explain.intervene's numbering: from 0, the
default -1 the last, the attention the rest of attnlab reads): its own weights are that layer's
(a Transformer's: the layer's head average, as DecoderOutput.attention is the last layer's),
and the tests intervene on that layer. The attributions, of the output to the input, are the
same whichever layer is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from torch import Tensor

from attnlab.attention import as_dense
from attnlab.data import BOS_ID, EOS_ID
from attnlab.models import DecoderOutput, DecoderState, LanguageModel, Seq2Seq

from .attribution import ForcedPair, attribute, frozen
from .gradients import replaced_output
from .intervene import RowEdit, edited, without_interventions

FIRST_TESTED = 2   # a language model's first step with two earlier positions to tell apart


class Forced(Protocol):
    """What the faithfulness tests read of a model on a forced input and output."""

    @property
    def model(self) -> Seq2Seq | LanguageModel: ...
    @property
    def layer(self) -> int: ...             # the attention layer read and intervened on
    def tested(self) -> Tensor: ...         # the steps tested (n,)
    def visible(self) -> Tensor: ...        # the positions 0..k-1 each attends over: k (n,)
    def own(self) -> tuple[Tensor, Tensor]: ...   # its attention (T, K), distributions (T, V)
    # p(. | step rows[c]) of copy c of the input, its weights at that step changed by `edit`
    # (attnlab.explain.intervene's RowEdit, batch row c = copy c) if given: (C, V)
    def read(self, rows: Tensor, edit: RowEdit | None = None) -> Tensor: ...
    # per tested step, one of its visible positions but top[i], uniformly drawn: (n,)
    def random_other(self, top: Tensor, generator: torch.Generator) -> Tensor: ...
    # `method`'s relevance of every position to every step: (T, K)
    def attribute(self, method: str, steps: int) -> np.ndarray: ...


@dataclass(frozen=True)
class ForcedTranslation:
    """A Seq2Seq model on one forced pair (attnlab.explain.attribution.ForcedPair), reading
    attention layer `layer`."""

    model: Seq2Seq
    pair: ForcedPair
    layer: int = -1
    kept: dict = field(default_factory=dict, compare=False, repr=False)   # see `states`

    @classmethod
    def of(cls, model: Seq2Seq, source_ids: Sequence[int], target_ids: Sequence[int],
           layer: int = -1) -> ForcedTranslation:
        device = next(model.parameters()).device
        return cls(model, ForcedPair.of(source_ids, target_ids, device), layer)

    def tested(self) -> Tensor:
        return torch.arange(self.pair.steps, device=self.pair.src.device)

    def visible(self) -> Tensor:
        return torch.full((self.pair.steps,), self.pair.positions, device=self.pair.src.device)

    def own(self) -> tuple[Tensor, Tensor]:
        pair = self.pair
        out = self.model.all_positions(pair.src, pair.src_mask, pair.tgt_in)
        if out.attention is None:
            raise ValueError("the faithfulness tests need a model with attention")
        probs = out.logits.exp() if self.model.outputs_log_probs else out.logits.softmax(-1)
        return layer_attention(out, self.layer, pair.positions)[0], probs[0]

    def read(self, rows: Tensor, edit: RowEdit | None = None) -> Tensor:
        # Copy c changes step rows[c] only, so what comes before it is the model's own: each
        # step asked runs once, from the decoder's state before it (one stepwise pass over the
        # forced target, kept), for every copy that asks for it. A step costs one decoder step
        # and one output row per copy, not a whole target and T output rows.
        decoder, found = self.model.decoder, []
        order = rows.argsort(stable=True)
        steps, counts = rows[order].unique_consecutive(return_counts=True)
        for step, copies in zip(steps.tolist(), order.split(counts.tolist()), strict=True):
            state = self.states[step].reorder(torch.zeros_like(copies), memory=True)
            with edited(self.model, rows[copies], edit, self.layer, copies):
                logits, _, _ = decoder.step(self.pair.tgt_in[0, step].expand(len(copies)),
                                            state)                           # (copies, V)
            found.append(logits)
        logits = torch.cat(found)[order.argsort()]                           # (C, V)
        return logits.exp() if self.model.outputs_log_probs else logits.softmax(-1)

    @property
    def states(self) -> list[DecoderState]:
        """The decoder's state before each step of the forced target, from one stepwise pass
        with the model's own attention (outside any graph: nothing differentiates through the
        prefix), kept while the weights are those it was made with (the randomisation check
        changes them in place). `own` reads the same steps in one pass: the two agree to
        rounding."""
        version = tuple(parameter._version for parameter in self.model.parameters())
        kept = self.kept.get("states")
        if kept is None or kept[0] != version:
            self.kept["states"] = kept = (version, self._stepwise())
        return kept[1]

    def _stepwise(self) -> list[DecoderState]:
        decoder, tokens = self.model.decoder, self.pair.tgt_in
        with torch.no_grad(), without_interventions(self.model):
            state = decoder.start(self.model.encode(self.pair.src, self.pair.src_mask))
            found = []
            for step in range(self.pair.steps):
                found.append(state)
                _, _, state = decoder.step(tokens[:, step], state)
        return found

    def random_other(self, top: Tensor, generator: torch.Generator) -> Tensor:
        draw = torch.randint(0, self.pair.positions - 1, top.shape, generator=generator)
        draw = draw.to(top.device)
        return draw + (draw >= top).long()

    def attribute(self, method: str, steps: int) -> np.ndarray:
        return attribute(self.model, self.pair, method, steps=steps)


@dataclass(frozen=True)
class ForcedSentence:
    """An LSTMN language model on one sentence: inputs (1, T) = <s> w_1 .. w_n, targets (1, T)
    = w_1 .. w_n </s>, mask (1, T) all True; `layer` the LSTMN layer read (default its top)."""

    model: LanguageModel
    inputs: Tensor
    targets: Tensor
    mask: Tensor
    layer: int = -1

    @classmethod
    def of(cls, model: LanguageModel, ids: Sequence[int]) -> ForcedSentence:
        device = next(model.parameters()).device
        inputs = torch.tensor([[BOS_ID, *ids]], device=device)
        targets = torch.tensor([[*ids, EOS_ID]], device=device)
        return cls(model, inputs, targets, torch.ones_like(inputs, dtype=torch.bool))

    @property
    def steps(self) -> int:
        return int(self.inputs.shape[1])

    def tested(self) -> Tensor:
        return torch.arange(FIRST_TESTED, self.steps, device=self.inputs.device)

    def visible(self) -> Tensor:
        return self.tested()   # step t attends over positions 0..t-1

    def own(self) -> tuple[Tensor, Tensor]:
        out = self.model.all_positions(self.inputs, self.mask)
        if out.attention is None:
            raise ValueError("the self-attention tests need an LSTMN language model")
        return out.attention[self.layer, 0], out.logits[0].softmax(-1)     # (T, T), (T, V)

    def read(self, rows: Tensor, edit: RowEdit | None = None) -> Tensor:
        T, copies = self.steps, len(rows)
        with edited(self.model, rows, edit, self.layer):
            features = self.model.read(self.inputs.expand(copies, T),
                                       self.mask.expand(copies, T)).outputs  # (C, T, H)
        chosen = features[torch.arange(copies, device=rows.device), rows]   # (C, H)
        return self.model.output(chosen).softmax(-1)

    def random_other(self, top: Tensor, generator: torch.Generator) -> Tensor:
        # one of the t - 1 earlier positions other than the top one
        others = self.tested().cpu() - 1
        draw = (torch.rand(len(others), generator=generator, dtype=torch.float64)
                * others).long().to(top.device)
        return draw + (draw >= top).long()

    def attribute(self, method: str, steps: int) -> np.ndarray:
        if method != "gradient":
            raise ValueError(f"a language model is attributed by gradient only, not {method!r}")
        return gradient_x_input(self)


def layer_attention(out: DecoderOutput, layer: int, positions: int) -> Tensor:
    """Attention layer `layer`'s weights in a forced pass, dense (B, T, S): a Transformer's
    layer's head average (out.heads (B, L, H, T, S)), else the decoder's one attention (layer
    0 or -1); ValueError naming the layers there are."""
    if out.heads is not None:
        layers = out.heads.shape[1]
        if not -layers <= layer < layers:
            raise ValueError(f"no attention layer {layer}: this model has {layers} "
                             f"(0 to {layers - 1})")
        return out.heads[:, layer].mean(1)
    assert out.attention is not None   # own() refuses a model without attention first
    if layer not in (0, -1):
        raise ValueError(f"no attention layer {layer}: this model has one (0)")
    return as_dense(out.attention, positions)


def log_prob_at(model: LanguageModel, inputs: Tensor, mask: Tensor, targets: Tensor,
                rows: Tensor) -> Tensor:
    """log p(targets[b, t] | w_<=t) at one step t = rows[b] of each sequence b: (B,). The
    output layer runs at that step only."""
    features = model.read(inputs, mask).outputs                             # (B, T, H)
    batch = torch.arange(features.shape[0], device=features.device)
    scores = model.output(features[batch, rows]).log_softmax(-1)             # (B, V)
    return scores.gather(1, targets[batch, rows].unsqueeze(1)).squeeze(1)


def gradient_x_input(sentence: ForcedSentence) -> np.ndarray:
    """Gradient x input of log p(w_{t+1} | w_<=t) with respect to each position's input
    embedding, summed over the embedding (as attnlab.explain.attribution's): (T, T), row t the
    step, column j the position; columns > t are 0 (the model reads left to right), column t is
    the step's own input word, columns < t the earlier positions its attention reads. Copy t of
    a batch of T asks for step t, and one backward gives every copy's gradient (the fused LSTMN
    cannot batch its backward over rows, attnlab.explain.gradients.batched_grad)."""
    T, model = sentence.steps, sentence.model
    rows = torch.arange(T, device=sentence.inputs.device)   # copy t asks for step t
    with frozen(model):
        embedded = model.embedding(sentence.inputs.expand(T, T)).detach().requires_grad_(True)
        with replaced_output(model.embedding, embedded):                      # (T, T, E)
            chosen = log_prob_at(model, sentence.inputs.expand(T, T),
                                 sentence.mask.expand(T, T), sentence.targets.expand(T, T),
                                 rows)
        (grad,) = torch.autograd.grad(chosen.sum(), embedded)
    found: np.ndarray = (grad * embedded).sum(-1).detach().double().cpu().numpy()
    return found
