"""The self-attention faithfulness tests (attnlab.explain.self_attention) over a test text, for
one LSTMN language model: each sentence is read as written (its real next words forced), so
"the chosen word" at a step is the word the model finds most likely there. Per-sentence figures
are kept, for the across-seed statistics of `attnlab compare`.

    summary = faithfulness(model, sentences)     # encoded sentences (ids, no <s> or </s>)
    summary.rates()                              # erasure flip rates: top, random, top gradient
    sentence_nll(model, sentences, uniform=True) # per sentence (nll, tokens), uniform attention
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from attnlab.explain.intervene import uniform
from attnlab.explain.self_attention import (
    ForcedSentence,
    erasure_flips,
    gradient_x_input,
    intervening,
    own_steps,
    permutation_tvd,
    step_agreement,
)
from attnlab.models import LanguageModel

from .corpus import collate_text


@dataclass
class SelfAttentionSummary:
    """Per sentence tested: its steps tested (those with at least two earlier positions) and, of
    them, how many changed their most likely next word under erasure (`flips`: the top
    attended, a random other, the top gradient x input earlier position), and the mean over its
    steps of the permutation test's median TVD and of Kendall's tau between attention and
    gradient x input (`agreement["gradient"]`; NaN steps left out); None for a sentence with no
    step to average. The same keys as a translation run's summary, so the report reads both
    alike."""

    steps: list[int] = field(default_factory=list)
    flips: dict[str, list[int]] = field(default_factory=lambda: {
        "top_attention": [], "random": [], "top_gradient": []})
    permutation_tvd: list[float | None] = field(default_factory=list)
    agreement: dict[str, list[float | None]] = field(default_factory=lambda: {"gradient": []})

    @property
    def sentences(self) -> int:
        return len(self.steps)

    def rates(self) -> dict[str, float]:
        """Erasure flip rates: the share of all tested steps whose next word changed."""
        total = sum(self.steps)
        return {name: sum(counts) / total if total else float("nan")
                for name, counts in self.flips.items()}

    def to_dict(self) -> dict:
        return {**asdict(self), "flip_rates": self.rates()}


def faithfulness(model: LanguageModel, sentences: Sequence[Sequence[int]], *, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> SelfAttentionSummary:
    """Erasure, permutation and agreement (see attnlab.explain.self_attention) on each encoded
    sentence."""
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    summary = SelfAttentionSummary()
    for ids in sentences:
        sentence = ForcedSentence.of(ids, device)
        gradient = gradient_x_input(model, sentence)
        flips = erasure_flips(model, sentence, gradient, generator)
        summary.steps.append(flips.steps)
        counts = asdict(flips)
        for name, found in summary.flips.items():
            found.append(counts[name])
        tvd = permutation_tvd(model, sentence, generator)
        summary.permutation_tvd.append(float(tvd.mean()) if tvd.size else None)
        with torch.no_grad():
            attention = own_steps(model, sentence)[0].double().cpu().numpy()
        taus = step_agreement(attention, gradient)
        summary.agreement["gradient"].append(
            None if np.isnan(taus).all() else float(np.nanmean(taus)))
        if tick is not None:
            tick(1)
    return summary


@torch.no_grad()
def sentence_nll(model: LanguageModel, sentences: Sequence[Sequence[int]], *,
                 uniform_attention: bool = False, batch_size: int = 64) -> list[list[float]]:
    """Per sentence, in order, [negative log-likelihood, tokens] of w_1 .. w_n </s> (the tokens
    as perplexity counts them); with `uniform_attention` equal weight on every earlier position
    at every step (Wiegreffe & Pinter 2019). Batched by length."""
    device = next(model.parameters()).device
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    found: list[list[float]] = [[0.0, 0.0] for _ in sentences]
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = collate_text([list(sentences[i]) for i in chunk]).to(device)
        if uniform_attention:
            with intervening(model, uniform):
                logits = model.all_positions(batch.inputs, batch.mask).logits    # (B, T, V)
        else:
            logits = model.all_positions(batch.inputs, batch.mask).logits
        nll = F.cross_entropy(logits.transpose(1, 2), batch.targets, reduction="none")  # (B, T)
        per_sentence = (nll * batch.mask).sum(1).double().tolist()
        for index, value, tokens in zip(chunk, per_sentence, batch.mask.sum(1).tolist(),
                                        strict=True):
            found[index] = [value, float(tokens)]
    return found
