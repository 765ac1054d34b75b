"""The faithfulness tests (attnlab.explain.faithfulness, .eraser, .randomisation) over a test set,
one forced reading per sentence (attnlab.explain.forced), with per-sentence figures kept for the
across-seed statistics of `attnlab compare` (compare/report/explanations.py reads the record).

    summary = faithfulness(readings, adversarial=20, methods=METHODS)
    summary.rates()                     # erasure flip rates, one per entry of ERASED
    summary.flips["random"][k]          # of sentence k's summary.steps[k] steps
    summary.comprehensiveness["attention"][k]   # ERASER's, mean over sentence k's steps
    summary.to_dict()                   # the record's "faithfulness"

VERSION, which the records carry (through each task's explanation record), makes the records
of older code be made again: bump it when a test changes what the record holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from .controls import ERASED
from .eraser import RANKINGS, eraser
from .faithfulness import (
    ErasureFlips,
    adversarial_jsd,
    erasure_flips,
    permutation_tvd,
    step_agreement,
)
from .forced import Forced
from .methods import STEPS
from .randomisation import attention_view, attributions, survival

# 2: the erasure test's controls of comparable weight and the weight each erased, ERASER's
# comprehensiveness and sufficiency, the model-randomisation check (1: before them)
VERSION = 2


@dataclass
class FaithfulnessSummary:
    """Per sentence tested: its steps tested (`steps`) and, of them, how many changed their
    chosen token under erasure (`flips`, per entry of ERASED) with the attention weight each
    erased, summed over the steps (`erased_weight`); the mean over its steps of the
    permutation test's median TVD (None for a sentence with no step tested), of the
    adversarial JSD (the first sentences only; None when not run: no key in the record), of
    Kendall's tau between attention and each attribution (NaN steps left out; None for a
    sentence with none), of ERASER's comprehensiveness and sufficiency per ranking of RANKINGS,
    and of Kendall's tau between each view (attention, each attribution) and the same view of
    the model with randomised weights (`randomisation`). Per sentence, so that compare can
    resample sentences."""

    steps: list[int] = field(default_factory=list)
    flips: dict[str, list[int]] = field(default_factory=lambda: {name: [] for name in ERASED})
    permutation_tvd: list[float | None] = field(default_factory=list)
    adversarial_jsd: list[float] | None = None
    agreement: dict[str, list[float | None]] = field(default_factory=dict)
    erased_weight: dict[str, list[float]] = field(
        default_factory=lambda: {name: [] for name in ERASED})
    comprehensiveness: dict[str, list[float | None]] = field(
        default_factory=lambda: {name: [] for name in RANKINGS})
    sufficiency: dict[str, list[float | None]] = field(
        default_factory=lambda: {name: [] for name in RANKINGS})
    randomisation: dict[str, list[float | None]] = field(default_factory=dict)

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

    def add_erasure(self, found: ErasureFlips) -> None:
        self.steps.append(found.steps)
        for name in ERASED:
            self.flips[name].append(found.flips[name])
            self.erased_weight[name].append(found.weight[name])

    def add_eraser(self, forced: Forced, generator: torch.Generator) -> None:
        for name, found in eraser(forced, generator).items():
            self.comprehensiveness[name].append(_mean(found.comprehensiveness))
            self.sufficiency[name].append(_mean(found.sufficiency))


def faithfulness(readings: Iterable[Forced], *, adversarial: int | None = None,
                 methods: Sequence[str] = (), steps: int = STEPS, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """The tests on each reading: erasure, permutation, the adversarial search on the first
    `adversarial` (none when None), agreement with gradient x input always (the erasure test
    ranks by it) and with the other `methods` (integrated gradients with `steps` points),
    ERASER, and the randomisation check of attention and of those attributions."""
    tests = _Tests(adversarial, methods, steps, seed)
    for index, forced in enumerate(readings):
        tests.add(index, forced, attributions(forced, tests.names, steps))
        if tick is not None:
            tick(1)
    return tests.summary


def faithfulness_layers(sentences: Iterable[Sequence[Forced]], *,
                        adversarial: int | None = None, methods: Sequence[str] = (),
                        steps: int = STEPS, seed: int = 0,
                        tick: Callable[[int], None] | None = None
                        ) -> list[FaithfulnessSummary]:
    """`faithfulness` of each attention layer: `sentences` gives, per sentence, one reading
    per layer (the same sentence and output, first layer to last). Each layer's summary is
    what `faithfulness` gives on its readings alone, draws included; the attributions, of the
    output to the input whichever layer is read, are computed once per sentence. `tick`
    counts sentences of every layer."""
    layers: list[_Tests] = []
    for index, readings in enumerate(sentences):
        layers = layers or [_Tests(adversarial, methods, steps, seed) for _ in readings]
        shared = attributions(readings[-1], layers[0].names, steps)
        for tests, forced in zip(layers, readings, strict=True):
            tests.add(index, forced, shared)
            if tick is not None:
                tick(1)
    return [tests.summary for tests in layers]


class _Tests:
    """One summary's tests and draws, added to a reading at a time."""

    def __init__(self, adversarial: int | None, methods: Sequence[str], steps: int,
                 seed: int) -> None:
        self.adversarial, self.steps, self.seed = adversarial, steps, seed
        self.generator = torch.Generator().manual_seed(seed)
        # the draws of the tests added later, apart, so that the first ones draw as they did
        self.draws = torch.Generator().manual_seed(seed + 1)
        self.summary = FaithfulnessSummary(adversarial_jsd=None if adversarial is None else [])
        self.names = list(dict.fromkeys(["gradient", *methods]))
        self.summary.randomisation = {name: [] for name in ["attention", *self.names]}

    def add(self, index: int, forced: Forced, found: dict[str, np.ndarray]) -> None:
        """The tests on reading number `index`, `found` its attributions (`attributions`)."""
        summary, generator, draws = self.summary, self.generator, self.draws
        trained = {"attention": attention_view(forced), **found}     # each (T, K)
        summary.add_erasure(erasure_flips(forced, trained["gradient"], generator, draws))
        summary.permutation_tvd.append(_mean(permutation_tvd(forced, generator)))
        if summary.adversarial_jsd is not None and index < (self.adversarial or 0):
            summary.adversarial_jsd.append(float(adversarial_jsd(forced, seed=self.seed).mean()))
        for method in self.names:
            taus = step_agreement(forced, trained["attention"], trained[method])
            summary.agreement.setdefault(method, []).append(_mean(taus))
        summary.add_eraser(forced, draws)
        for view, taus in survival(forced, trained, draws, self.steps).items():
            summary.randomisation[view].append(_mean(taus))


def _mean(values: np.ndarray) -> float | None:
    """The mean of the finite values (NaN left out), None where there is none."""
    return None if np.isnan(values).all() else float(np.nanmean(values))
