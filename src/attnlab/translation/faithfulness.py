"""The faithfulness tests (attnlab.explain.faithfulness) over a test set, for one translation run:
each sentence is translated greedily and its own output forced, so the chosen token at every
step is the one the model wrote. Per-sentence figures are kept, for the across-seed statistics
of `attnlab compare`.

    summary = faithfulness(run, sources, limit=100, adversarial=20)
    summary.rates()                     # erasure flip rates: top attended, random, top gradient
    summary.flips["random"][k]          # of sentence k's summary.steps[k] steps
    uniform_translations(run, sources)  # Wiegreffe & Pinter's baseline: uniform weights
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from attnlab.data.vocab import EOS_ID
from attnlab.explain.attribution import METHODS, ForcedPair, attribute, forced_pass
from attnlab.explain.faithfulness import (
    adversarial_jsd,
    agreement,
    erasure_flips,
    permutation_tvd,
)
from attnlab.explain.intervene import intervening, uniform

from .protocol import TranslatingRun
from .translate import TranslationResult

ATTRIBUTION_STEPS = 16   # integrated gradients' points here: agreement ranks, it needs no more


@dataclass
class FaithfulnessSummary:
    """Per translation tested: the target steps tested (`steps`) and, of them, how many changed
    their chosen token under erasure (`flips`: top attended, random other, top gradient
    position); the mean over its steps of the permutation test's median TVD, of the
    adversarial JSD (the first `adversarial` sentences only) and of Kendall's tau between
    attention and each attribution (NaN steps left out; None for a sentence with none). Per
    sentence, so that compare can resample sentences."""

    steps: list[int] = field(default_factory=list)
    flips: dict[str, list[int]] = field(default_factory=lambda: {
        "top_attention": [], "random": [], "top_gradient": []})
    permutation_tvd: list[float] = field(default_factory=list)
    adversarial_jsd: list[float] = field(default_factory=list)
    agreement: dict[str, list[float | None]] = field(default_factory=dict)

    @property
    def sentences(self) -> int:
        return len(self.steps)

    def rates(self) -> dict[str, float]:
        """Erasure flip rates: the share of all tested steps whose chosen token changed."""
        total = sum(self.steps)
        return {name: sum(counts) / total if total else float("nan")
                for name, counts in self.flips.items()}

    def to_dict(self) -> dict:
        return {**asdict(self), "flip_rates": self.rates()}


def faithfulness(run: TranslatingRun, sources: Sequence[str], *, limit: int = 100,
                 adversarial: int = 20, methods: Sequence[str] = METHODS,
                 steps: int = ATTRIBUTION_STEPS, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """The faithfulness tests on the first `limit` non-empty `sources` (see the module);
    agreement with gradient x input always (the erasure test computes it), with the other
    `methods` (integrated gradients with `steps` points) as asked."""
    model = run.model
    device = next(model.parameters()).device
    lines = [line for line in sources if line.strip()][:limit]
    generator = torch.Generator().manual_seed(seed)
    summary = FaithfulnessSummary()
    for index, result in enumerate(run.translate(lines, beam=1)):
        target = [i for i in result.tokens if i != EOS_ID]
        pair = ForcedPair.of(run.vocabs.src.encode(lines[index]), target, device)
        gradient = attribute(model, pair, "gradient")
        flips = erasure_flips(model, pair, gradient, generator)
        summary.steps.append(flips.steps)
        counts = asdict(flips)
        for name, found in summary.flips.items():
            found.append(counts[name])
        summary.permutation_tvd.append(float(permutation_tvd(model, pair, generator).mean()))
        if index < adversarial:
            summary.adversarial_jsd.append(float(adversarial_jsd(model, pair, seed=seed).mean()))
        attention, _ = forced_pass(model, pair)
        assert attention is not None  # erasure_flips refused a model without attention
        for method in dict.fromkeys(["gradient", *methods]):
            values = gradient if method == "gradient" else attribute(
                model, pair, method, steps=steps)
            taus = agreement(attention, values)
            summary.agreement.setdefault(method, []).append(
                None if np.isnan(taus).all() else float(np.nanmean(taus)))
        if tick is not None:
            tick(1)
    return summary


def uniform_translations(run: TranslatingRun, sources: Sequence[str],
                         **decode: Any) -> list[TranslationResult]:
    """The translations with equal weight on every real source position at every step
    (Wiegreffe & Pinter 2019): what attention's weights add over no choice at all."""
    with intervening(run.model, uniform):
        return run.translate(list(sources), **decode)
