"""The faithfulness tests (attnlab.explain.summary) over a test set, for one translation run:
each sentence is translated greedily and its own output forced, so the chosen token at every
step is the one the model wrote.

    summary = faithfulness(run, sources, limit=100, adversarial=20)
    layers = faithfulness_per_layer(run, sources, limit=100)   # one summary per layer
    uniform_translations(run, sources)  # Wiegreffe & Pinter's baseline: uniform weights
    uniform_translations(run, sources, layer=0)   # a Transformer's first layer made uniform

A Transformer has an attention layer per decoder layer (its cross-attention, every head):
`faithfulness_per_layer` runs the same tests on each, intervening on that layer's heads
(attnlab.explain.intervene) and reading that layer's head average as its attention; the last
layer's summary is `faithfulness`'s. A recurrent decoder has one layer. The records keep the
per-layer summaries under "faithfulness_layers", first layer first (LAYERS_KEY), for
attnlab.compare.report.layer_faithfulness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from attnlab.data.vocab import EOS_ID
from attnlab.explain.attribution import ForcedPair
from attnlab.explain.forced import ForcedTranslation
from attnlab.explain.intervene import attention_layers, intervening, uniform
from attnlab.explain.methods import METHODS
from attnlab.explain.summary import FaithfulnessSummary
from attnlab.explain.summary import faithfulness as summarise
from attnlab.explain.summary import faithfulness_layers as summarise_layers

from .protocol import TranslatingRun
from .translate import TranslationResult

ATTRIBUTION_STEPS = 16   # integrated gradients' points here: agreement ranks, it needs no more
LAYERS_KEY = "faithfulness_layers"   # the explain record's per-layer summaries, first to last


def faithfulness(run: TranslatingRun, sources: Sequence[str], *, limit: int = 100,
                 adversarial: int = 20, methods: Sequence[str] = METHODS,
                 steps: int = ATTRIBUTION_STEPS, seed: int = 0, layer: int = -1,
                 tick: Callable[[int], None] | None = None) -> FaithfulnessSummary:
    """The faithfulness tests on the first `limit` non-empty `sources`, each with its greedy
    translation forced, on attention layer `layer` (default the last, the one attnlab reads);
    agreement with gradient x input always, with the other `methods` as asked."""
    pairs = forced_pairs(run, sources, limit)
    return summarise(_readings(run, pairs, layer), adversarial=adversarial, methods=methods,
                     steps=steps, seed=seed, tick=tick)


def faithfulness_per_layer(run: TranslatingRun, sources: Sequence[str], *, limit: int = 100,
                           adversarial: int = 20, methods: Sequence[str] = METHODS,
                           steps: int = ATTRIBUTION_STEPS, seed: int = 0,
                           tick: Callable[[int], None] | None = None
                           ) -> list[FaithfulnessSummary]:
    """`faithfulness` on every attention layer of the run's model, first to last, on the same
    translations (made once) and with the same draws: the last is `faithfulness`'s summary. The
    attributions (of the output to the source, whichever layer is read) are computed once per
    sentence. `tick` counts sentences of every layer."""
    layers = range(len(attention_layers(run.model)))
    sentences = ([ForcedTranslation(run.model, pair, layer) for layer in layers]
                 for pair in _forced(run, forced_pairs(run, sources, limit)))
    return summarise_layers(sentences, adversarial=adversarial, methods=methods, steps=steps,
                            seed=seed, tick=tick)


def forced_pairs(run: TranslatingRun, sources: Sequence[str],
                 limit: int) -> list[tuple[list[int], list[int]]]:
    """(source ids, greedy output ids without EOS) of the first `limit` non-empty sources."""
    lines = [line for line in sources if line.strip()][:limit]
    return [(run.vocabs.src.encode(line), [i for i in result.tokens if i != EOS_ID])
            for line, result in zip(lines, run.translate(lines, beam=1), strict=True)]


def _readings(run: TranslatingRun, pairs: list[tuple[list[int], list[int]]],
              layer: int) -> Iterator[ForcedTranslation]:
    for pair in _forced(run, pairs):
        yield ForcedTranslation(run.model, pair, layer)


def _forced(run: TranslatingRun, pairs: list[tuple[list[int], list[int]]]
            ) -> Iterator[ForcedPair]:
    device = next(run.model.parameters()).device
    for source, target in pairs:
        yield ForcedPair.of(source, target, device)


def uniform_translations(run: TranslatingRun, sources: Sequence[str], *, layer: int = -1,
                         **decode: Any) -> list[TranslationResult]:
    """The translations with equal weight on every real source position at every step
    (Wiegreffe & Pinter 2019) in attention layer `layer` (default the last; every head of a
    Transformer's layer): what attention's weights add over no choice at all."""
    with intervening(run.model, uniform, layer):
        return run.translate(list(sources), **decode)
