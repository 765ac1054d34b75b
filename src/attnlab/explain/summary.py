"""The faithfulness tests (attnlab.explain.faithfulness) over a test set, one forced reading per
sentence (attnlab.explain.forced), with per-sentence figures kept for the across-seed
statistics of `attnlab compare` (compare/report/explanations.py reads the record).

    summary = faithfulness(readings, adversarial=20, methods=METHODS)
    summary.rates()                     # erasure flip rates: top attended, random, top gradient
    summary.flips["random"][k]          # of sentence k's summary.steps[k] steps
    summary.to_dict()                   # the record's "faithfulness"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from .faithfulness import adversarial_jsd, erasure_flips, permutation_tvd, step_agreement
from .forced import Forced
from .methods import STEPS


@dataclass
class FaithfulnessSummary:
    """Per sentence tested: its steps tested (`steps`) and, of them, how many changed their
    chosen token under erasure (`flips`: top attended, random other, top gradient position);
    the mean over its steps of the permutation test's median TVD (None for a sentence with no
    step tested), of the adversarial JSD (the first sentences only; None when not run: no key
    in the record) and of Kendall's tau between attention and each attribution (NaN steps left
    out; None for a sentence with none). Per sentence, so that compare can resample sentences."""

    steps: list[int] = field(default_factory=list)
    flips: dict[str, list[int]] = field(default_factory=lambda: {
        "top_attention": [], "random": [], "top_gradient": []})
    permutation_tvd: list[float | None] = field(default_factory=list)
    adversarial_jsd: list[float] | None = None
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
        found = asdict(self)
        if self.adversarial_jsd is None:
            del found["adversarial_jsd"]
        return {**found, "flip_rates": self.rates()}


def faithfulness(readings: Iterable[Forced], *, adversarial: int | None = None,
                 methods: Sequence[str] = (), steps: int = STEPS, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """The tests on each reading: erasure, permutation, the adversarial search on the first
    `adversarial` (none when None), agreement with gradient x input always (the erasure test
    ranks by it) and with the other `methods` (integrated gradients with `steps` points)."""
    generator = torch.Generator().manual_seed(seed)
    summary = FaithfulnessSummary(adversarial_jsd=None if adversarial is None else [])
    for index, forced in enumerate(readings):
        gradient = forced.attribute("gradient", steps)
        counts = asdict(erasure_flips(forced, gradient, generator))
        summary.steps.append(counts["steps"])
        for name, found in summary.flips.items():
            found.append(counts[name])
        summary.permutation_tvd.append(_mean(permutation_tvd(forced, generator)))
        if summary.adversarial_jsd is not None and index < (adversarial or 0):
            summary.adversarial_jsd.append(float(adversarial_jsd(forced, seed=seed).mean()))
        with torch.no_grad():
            attention = forced.own()[0].double().cpu().numpy()                 # (T, K)
        for method in dict.fromkeys(["gradient", *methods]):
            values = gradient if method == "gradient" else forced.attribute(method, steps)
            taus = step_agreement(forced, attention, values)
            summary.agreement.setdefault(method, []).append(
                None if np.isnan(taus).all() else float(np.nanmean(taus)))
        if tick is not None:
            tick(1)
    return summary


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None
