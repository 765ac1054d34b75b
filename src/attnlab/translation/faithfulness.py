"""The faithfulness tests (attnlab.explain.faithfulness) over a test set, for one translation run:
each sentence is translated greedily and its own output forced, so the chosen token at every
step is the one the model wrote. Per-sentence figures are kept, for the across-seed statistics
of `attnlab compare`.

    summary = faithfulness(run, sources, limit=100, adversarial=20)
    summary.rates()                     # erasure flip rates: top attended, random, top gradient
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
    """Over `sentences` translations of `steps` target steps in all: erasure flips (counts of
    steps whose chosen token changed: top attended, random other, top gradient position);
    per sentence, the mean over its steps of the permutation test's median TVD, of the
    adversarial JSD (the first `adversarial` sentences only) and of Kendall's tau between
    attention and each attribution (NaN steps left out; a sentence with none is left out)."""

    sentences: int = 0
    steps: int = 0
    flips: dict[str, int] = field(default_factory=lambda: {
        "top_attention": 0, "random": 0, "top_gradient": 0})
    permutation_tvd: list[float] = field(default_factory=list)
    adversarial_jsd: list[float] = field(default_factory=list)
    agreement: dict[str, list[float]] = field(default_factory=dict)

    def rates(self) -> dict[str, float]:
        """Erasure flip rates: the share of tested steps whose chosen token changed."""
        return {name: count / self.steps if self.steps else float("nan")
                for name, count in self.flips.items()}

    def to_dict(self) -> dict:
        return {**asdict(self), "flip_rates": self.rates()}


def faithfulness(run: TranslatingRun, sources: Sequence[str], *, limit: int = 100,
                 adversarial: int = 20, methods: Sequence[str] = METHODS,
                 seed: int = 0, tick: Callable[[int], None] | None = None
                 ) -> FaithfulnessSummary:
    """The faithfulness tests on the first `limit` non-empty `sources` (see the module)."""
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
        summary.sentences += 1
        summary.steps += flips.steps
        counts = asdict(flips)
        for name in summary.flips:
            summary.flips[name] += counts[name]
        summary.permutation_tvd.append(float(permutation_tvd(model, pair, generator).mean()))
        if index < adversarial:
            summary.adversarial_jsd.append(float(adversarial_jsd(model, pair, seed=seed).mean()))
        attention, _ = forced_pass(model, pair)
        assert attention is not None  # erasure_flips refused a model without attention
        for method in methods:
            values = gradient if method == "gradient" else attribute(
                model, pair, method, steps=ATTRIBUTION_STEPS)
            taus = agreement(attention, values)
            if not np.isnan(taus).all():
                summary.agreement.setdefault(method, []).append(float(np.nanmean(taus)))
        if tick is not None:
            tick(1)
    return summary


def uniform_translations(run: TranslatingRun, sources: Sequence[str],
                         **decode: Any) -> list[TranslationResult]:
    """The translations with equal weight on every real source position at every step
    (Wiegreffe & Pinter 2019): what attention's weights add over no choice at all."""
    with intervening(run.model, uniform):
        return run.translate(list(sources), **decode)
