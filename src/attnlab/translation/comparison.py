"""A translation run scored as a member of a comparison suite (attnlab compare)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.eval import DEFAULT_EDGES
from attnlab.models import count_parameters

from .alignment import dates_gold, rwth_gold_for_run
from .alignment.golds import within_reach
from .evaluate import evaluate_run, read_pairs
from .run import TranslationRun

# What a suite's claim may name (attnlab.compare.suite.checks): the scores of comparison_scores
# (bleu, chrf), the dates task's own exact_match and the drop of BLEU from the shortest sources
# to the longest (bleu_drop), both which compare's report adds from the record's texts and
# buckets, and the AER of the argmax attention on the record's gold sets (aer).
CLAIM_METRICS = ("bleu", "chrf", "exact_match", "bleu_drop", "aer")

# The row of attention drawn for target word t, per decoder kind, and why (the report says it).
ATTENTION_ROWS = {
    "bahdanau": "row t is alpha_t computed from s_{t-1} (the state before y_t is emitted): "
                "its context c_t feeds s_t and the output layer that emits y_t",
    "luong": "row t is alpha_t computed from h_t (the state that then emits y_t through "
             "h~_t = tanh(W_c[c_t; h_t]))",
    "lstmn": "row t is alpha_t computed from h_t, as in the Luong decoder",
    "transformer": "row t is the last layer's cross-attention from target position t (whose "
                   "input is y_{t-1}, and which emits y_t), averaged over the layer's heads",
}


def comparison_scores(run_dir: Path, evaluate: Mapping[str, Any], example: str | None,
                      rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """A compare member's figures: BLEU and chrF of beam search on the test split, BLEU by
    source length, AER of the argmax attention on the RWTH gold (German-English runs, when the
    gold is found) and on the dates task's gold (dates runs); the example's word attention.
    `evaluate`: the suite's evaluate options (beam, limit, length_edges)."""
    run = TranslationRun.load(run_dir)
    options = evaluate
    sources, references, src_path = read_pairs(run, None, None)
    limit = options.get("limit")
    if limit:
        sources, references = sources[:limit], references[:limit]
    golds = [gold for gold in (rwth_gold_for_run(run, rwth),
                               dates_gold(run, src_path, sources, references, first_lines=True))
             if gold is not None and run.has_attention]   # no attention, no alignments
    golds = [within_reach(run, gold) for gold in golds]
    edges = tuple(float(edge) for edge in options.get("length_edges", DEFAULT_EDGES))
    if edges[-1] != math.inf:
        edges += (math.inf,)   # the last bucket is open: "50+"
    evaluation = evaluate_run(run, sources, references,
                              decode=run.decode_settings(beam=options.get("beam", 5)),
                              edges=edges, golds=golds, progress=progress)
    summary = evaluation.to_dict()
    for alignment, score in zip(summary["alignments"], evaluation.alignments, strict=True):
        # per pair, for the significance tests (attnlab.compare.stats.verdicts)
        alignment.update(counts=score.counts, baseline_counts=score.diagonal_counts)
    decoder = run.config.model.decoder.kind
    return {"scores": {"bleu": evaluation.scores.bleu, "chrf": evaluation.scores.chrf},
            "signature": evaluation.scores.bleu_signature,
            "hypotheses": evaluation.hypotheses, "references": list(references),
            # each sentence's source length (its bucket), so bleu_drop is tested by sentence
            "source_words": [len(source.split()) for source in sources],
            "buckets": summary["buckets"], "alignments": summary["alignments"],
            "parameters": count_parameters(run.model), "checkpoint": run.checkpoint,
            "attention_row": ATTENTION_ROWS.get(decoder),
            "example": _translation_example(run, example or _example_source(sources))}


def _example_source(sources: list[str]) -> str:
    """The first test sentence of 10 to 16 words (else the first): long enough to show an
    alignment, short enough to read."""
    for source in sources:
        if 10 <= len(source.split()) <= 16:
            return source
    return sources[0]


def _translation_example(run, sentence: str) -> dict | None:
    if not run.has_attention:
        return {"source": sentence, "translation": next(iter(run.translate([sentence]))).text,
                "weights": None}
    result = next(iter(run.translate([sentence])))
    if run.character_level:   # one "word" per date: show the characters it reads
        tokens = (result.source_pieces, result.target_pieces, result.attention)
    else:
        tokens = (result.source_words, result.target_words, result.word_attention)
    return {"source": sentence, "translation": result.text, "source_tokens": tokens[0],
            "target_tokens": tokens[1], "weights": np.asarray(tokens[2]).round(4).tolist(),
            "units": "characters" if run.character_level else "words"}
