"""Scoring one trained member: each task's figures as a plain JSON-able dict (`scores`), plus
what the report draws (BLEU by length, AER, the example sentence's attention).

translation: BLEU and chrF of beam search on the test split, BLEU by source length, AER of the
    argmax attention on the RWTH gold (German-English runs, when the gold is found) and on the
    dates task's gold (dates runs); the example sentence's word-level attention.
lm: test perplexity (and the best validation perplexity); the example's self-attention.
captioning: BLEU-1..4 and localisation on the test split (beam from the run's config).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np

from attnlab.eval import DEFAULT_EDGES

from .suite import Suite

# The row of attention drawn for target word t, per decoder kind, and why (the report says it).
ATTENTION_ROWS = {
    "bahdanau": "row t is alpha_t computed from s_{t-1} (the state before y_t is emitted): "
                "its context c_t feeds s_t and the output layer that emits y_t",
    "luong": "row t is alpha_t computed from h_t (the state that then emits y_t through "
             "h~_t = tanh(W_c[c_t; h_t]))",
    "lstmn": "row t is alpha_t computed from h_t, as in the Luong decoder",
}


def translation_scores(run_dir: Path, suite: Suite, rwth: str | os.PathLike | None,
                       progress: bool = False) -> dict:
    from attnlab.translation import load_run
    from attnlab.translation.evaluate import evaluate_run, read_pairs
    from attnlab.translation.golds import dates_gold, rwth_gold_for_run

    run = load_run(run_dir)
    options = suite.evaluate
    sources, references, src_path = read_pairs(run, None, None)
    limit = options.get("limit")
    if limit:
        sources, references = sources[:limit], references[:limit]
    golds = [gold for gold in (rwth_gold_for_run(run, rwth),
                               dates_gold(run, src_path, sources, references, first_lines=True))
             if gold is not None and run.has_attention]   # no attention, no alignments
    golds = [_within_reach(run, gold) for gold in golds]
    edges = tuple(float(edge) for edge in options.get("length_edges", DEFAULT_EDGES))
    if edges[-1] != math.inf:
        edges += (math.inf,)   # the last bucket is open: "50+"
    evaluation = evaluate_run(run, sources, references, beam=options.get("beam", 5),
                              edges=edges, golds=golds, progress=progress)
    summary = evaluation.to_dict()
    decoder = run.config.model.decoder.kind
    check = _row_check(run, golds[0]) if golds and run.has_attention else None
    return {"scores": {"bleu": evaluation.scores.bleu, "chrf": evaluation.scores.chrf},
            "signature": evaluation.scores.bleu_signature,
            "buckets": summary["buckets"], "alignments": summary["alignments"],
            "parameters": _parameters(run.model), "checkpoint": run.checkpoint,
            "attention_row": ATTENTION_ROWS.get(decoder), "row_check": check,
            "example": _translation_example(run, suite.example or _example_source(sources))}


def _within_reach(run, gold):
    """The gold pairs a location-score model can address: its softmax covers max_len source
    positions, so longer sources (EOS included) are left out and the set's name says so."""
    from dataclasses import replace

    attention = run.config.model.decoder.attention
    limit = getattr(attention, "max_len", None) if attention.score == "location" else None
    if limit is None:
        return gold
    keep = [k for k, source in enumerate(gold.sources)
            if len(run.vocabs.src.encode(source)) + 1 <= limit]
    if len(keep) == len(gold.sources):
        return gold
    dropped = len(gold.sources) - len(keep)
    return replace(gold, name=f"{gold.name}; {dropped} pairs longer than max_len={limit} left "
                              f"out", sources=[gold.sources[k] for k in keep],
                   targets=[gold.targets[k] for k in keep],
                   alignments=[gold.alignments[k] for k in keep])


def _row_check(run, gold) -> dict:
    """AER with target word t given the links of row t-1, t and t+1 (see row_shift_aers)."""
    from attnlab.translation.alignment import row_shift_aers

    found = row_shift_aers(run, gold)
    return {"gold": gold.name, "aer": {str(shift): value for shift, value in found.items()}}


def row_check_for(run_dir: Path, rwth: str | os.PathLike | None) -> dict | None:
    """The row check of a member scored before attnlab made it (None without attention or a
    gold set)."""
    from attnlab.translation import load_run
    from attnlab.translation.golds import rwth_gold_for_run

    run = load_run(run_dir)
    gold = rwth_gold_for_run(run, rwth) if run.has_attention else None
    return _row_check(run, gold) if gold is not None else None


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
            "target_tokens": tokens[1], "weights": np.asarray(tokens[2]).round(4).tolist()}


def lm_scores(run_dir: Path, suite: Suite, progress: bool = False) -> dict:
    from attnlab.lm import read_run
    from attnlab.lm.evaluate import evaluate_perplexity
    from attnlab.lm.loading import load_language_model

    result = evaluate_perplexity(run_dir, progress=progress)
    trained = load_language_model(run_dir, result.checkpoint)
    example = None
    if suite.example and trained.config.model.kind == "lstmn":
        reading = read_run(run_dir, suite.example)
        example = {"source": suite.example, "tokens": list(reading.tokens),
                   "weights": np.asarray(reading.weights[-1]).round(4).tolist()}   # last layer
    return {"scores": {"perplexity": result.perplexity}, "parameters": _parameters(
        trained.model), "checkpoint": result.checkpoint, "example": example,
            "details": asdict(result)}


def captioning_scores(run_dir: Path, suite: Suite, progress: bool = False) -> dict:
    from attnlab.captioning import evaluate_split, load_trained

    trained = load_trained(run_dir)
    metrics, signature, images = evaluate_split(trained, limit=suite.evaluate.get("limit"),
                                                progress=progress)
    return {"scores": {name: float(value) for name, value in metrics.items()},
            "signature": signature, "images": images,
            "parameters": _parameters(trained.model), "checkpoint": "best"}


def _parameters(model) -> int:
    return sum(parameter.numel() for parameter in model.parameters())


# The validation metric each task's curve against training minutes shows, and the main score.
CURVE_METRIC = {"translation": "bleu", "lm": "perplexity", "captioning": "bleu4"}
MAIN_SCORE = {"translation": "bleu", "lm": "perplexity", "captioning": "bleu4"}


def member_scores(task: str, run_dir: Path, suite: Suite,
                  rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """The member's scores; `progress`: bars on a terminal while it decodes and aligns."""
    if task == "translation":
        return translation_scores(run_dir, suite, rwth, progress)
    if task == "lm":
        return lm_scores(run_dir, suite, progress)
    return captioning_scores(run_dir, suite, progress)
