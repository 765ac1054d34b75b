"""A translation run's answer to "is attention an alignment, is it an explanation?", as one
JSON-able record for `attnlab compare SUITE --explain` (its DIR/<member>/seed-<k>/explain.json):

- every extraction's AER on the run's gold (the dates task's gold, else RWTH German-English),
  per pair, beside the diagonal aligner (alignment/extractions.py);
- the faithfulness tests on the first test sentences, per sentence (faithfulness.py);
- the test set translated again with uniform attention (Wiegreffe & Pinter 2019), with the
  suite's beam, beside the member's own hypotheses in its compare.json.

Per pair and per sentence, so that compare's statistics resample sentences within seeds
(attnlab.compare.stats.across_seeds). `settings` fix how much is computed; a record made with other
settings is made again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnlab.errors import ConfigError
from attnlab.explain.intervene import attention_layers
from attnlab.explain.methods import METHODS
from attnlab.explain.summary import VERSION as FAITHFULNESS_VERSION
from attnlab.train.progress import progress_bar

from .alignment import dates_gold, rwth_gold_for_run
from .alignment.extractions import extraction_scores
from .alignment.golds import within_reach
from .alignment.readings import VERSION as READINGS_VERSION
from .evaluate import read_pairs
from .faithfulness import LAYERS_KEY, faithfulness_per_layer, uniform_translations
from .run import TranslationRun

# What an explain record computes unless the suite's `explain:` block says otherwise: pairs of
# the gold and test sentences (the first ones), adversarial searches (the costliest test, 100
# gradient steps per target step), integrated gradients' points.
__all__ = ["DEFAULTS", "VERSION", "explanation_scores", "reverse_model"]

# The version of the code behind a record, which it carries (compare's `asked`): the readings'
# and the faithfulness tests' together. Each only ever goes up, so a bump of either raises the
# sum, and a record older code made is made again.
VERSION = READINGS_VERSION + FAITHFULNESS_VERSION

DEFAULTS: dict[str, Any] = {"pairs": 200, "sentences": 100, "adversarial": 20, "steps": 16,
                            "methods": list(METHODS)}


def reverse_model(run: TranslationRun, path: Path) -> TranslationRun:
    """The run at `path`, checked to translate the other way from `run` and in the same units
    (a reverse member of a suite that names the wrong run is refused in one sentence)."""
    backward = TranslationRun.load(path)
    ahead = (run.config.data.src_lang, run.config.data.tgt_lang)
    behind = (backward.config.data.src_lang, backward.config.data.tgt_lang)
    if behind != ahead[::-1] or backward.character_level != run.character_level:
        raise ConfigError(f"{path} translates {'-'.join(behind)}, not the reverse of "
                          f"{'-'.join(ahead)} in the same units, so it cannot be read as the "
                          f"reverse direction")
    return backward


def explanation_scores(run_dir: Path, asked: Mapping[str, Any], evaluate: Mapping[str, Any],
                       rwth: str | os.PathLike | None = None, progress: bool = False, *,
                       reverse: Path | None = None) -> dict:
    """The record (see the module). `asked`: the suite's explain block (pairs, sentences,
    adversarial, steps, methods; DEFAULTS for the rest); `evaluate`: the suite's evaluate
    options (beam, limit), as the member was scored with; `reverse`: a run trained the other
    way, whose attention the extractions read too."""
    settings = {**DEFAULTS, **{key: asked[key] for key in DEFAULTS if key in asked}}
    run = TranslationRun.load(run_dir)
    if not run.has_attention:
        return {"settings": dict(settings), "attention": False}
    sources, references, src_path = read_pairs(run, None, None)
    limit = evaluate.get("limit")
    if limit:
        sources, references = sources[:limit], references[:limit]
    gold = (dates_gold(run, src_path, sources, references, first_lines=True)
            or rwth_gold_for_run(run, rwth))
    record: dict[str, Any] = {"settings": dict(settings), "attention": True}
    backward = None if reverse is None else reverse_model(run, reverse)
    if gold is not None:
        gold = within_reach(run, gold)
        if backward is not None:
            gold = within_reach(backward, gold, reverse=True)
        pairs = min(settings["pairs"], len(gold.sources))
        with progress_bar(pairs, "extractions", enabled=progress, unit="pair") as bar:
            found = extraction_scores(run, gold, methods=settings["methods"],
                                      steps=settings["steps"],
                                      limit=settings["pairs"], reverse=backward,
                                      tick=bar.update)
        record["extractions"] = found.to_dict()
    # every layer of attention tested alike (a recurrent decoder has one; the last is the one
    # attnlab reads, kept under "faithfulness" as for every model)
    sentences = min(settings["sentences"], len(sources)) * len(attention_layers(run.model))
    with progress_bar(sentences, "faithfulness", enabled=progress, unit="sentence") as bar:
        layers = faithfulness_per_layer(run, sources, limit=settings["sentences"],
                                        adversarial=settings["adversarial"],
                                        methods=settings["methods"], steps=settings["steps"],
                                        tick=bar.update)
    record["faithfulness"] = layers[-1].to_dict()
    if len(layers) > 1:
        record[LAYERS_KEY] = [summary.to_dict() for summary in layers]
    decode = run.decode_settings(beam=evaluate.get("beam", 5))
    flat = uniform_translations(run, sources, decode=decode)
    record["uniform"] = {"hypotheses": [result.text for result in flat],
                         "references": list(references), "beam": decode.beam}
    return record
