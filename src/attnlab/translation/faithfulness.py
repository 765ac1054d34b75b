"""The faithfulness tests (attnlab.explain.summary) over a test set, for one translation run:
each sentence is translated greedily and its own output forced, so the chosen token at every
step is the one the model wrote.

    summary = faithfulness(run, sources, limit=100, adversarial=20)
    uniform_translations(run, sources)  # Wiegreffe & Pinter's baseline: uniform weights
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from attnlab.data.vocab import EOS_ID
from attnlab.explain.forced import ForcedTranslation
from attnlab.explain.intervene import intervening, uniform
from attnlab.explain.methods import METHODS
from attnlab.explain.summary import FaithfulnessSummary
from attnlab.explain.summary import faithfulness as summarise

from .protocol import TranslatingRun
from .translate import TranslationResult

ATTRIBUTION_STEPS = 16   # integrated gradients' points here: agreement ranks, it needs no more


def faithfulness(run: TranslatingRun, sources: Sequence[str], *, limit: int = 100,
                 adversarial: int = 20, methods: Sequence[str] = METHODS,
                 steps: int = ATTRIBUTION_STEPS, seed: int = 0,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """The faithfulness tests on the first `limit` non-empty `sources`, each with its greedy
    translation forced; agreement with gradient x input always, with the other `methods` as
    asked."""
    lines = [line for line in sources if line.strip()][:limit]

    def readings() -> Iterator[ForcedTranslation]:
        for line, result in zip(lines, run.translate(lines, beam=1), strict=True):
            target = [i for i in result.tokens if i != EOS_ID]
            yield ForcedTranslation.of(run.model, run.vocabs.src.encode(line), target)

    return summarise(readings(), adversarial=adversarial, methods=methods, steps=steps,
                     seed=seed, tick=tick)


def uniform_translations(run: TranslatingRun, sources: Sequence[str],
                         **decode: Any) -> list[TranslationResult]:
    """The translations with equal weight on every real source position at every step
    (Wiegreffe & Pinter 2019): what attention's weights add over no choice at all."""
    with intervening(run.model, uniform):
        return run.translate(list(sources), **decode)
