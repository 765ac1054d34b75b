"""The self-contained HTML report of a run, results first: BLEU and chrF with their sacreBLEU
signatures, AER per gold set, BLEU by source length (Bahdanau et al. 2015, Fig. 2) as a table and
bars; then sample translations with their references and heatmaps; then the training curves;
then the config, folded. Put together from the library's pieces (train.monitor.read_curves,
viz.report, and this recipe's evaluate, golds, figure and run_summary).

The page names files by their path inside the run directory or by their file name, never by a
path of the machine it was made on, so it can be shared as it is."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from attnlab.config import config_to_dict
from attnlab.data import read_parallel
from attnlab.errors import DataError
from attnlab.eval.buckets import empty_note, filled
from attnlab.files import atomic_output, check_output_path
from attnlab.train.monitor import METRICS_FILE, read_curves
from attnlab.viz.buckets import worth_a_chart
from attnlab.viz.report import Example, Result, report_html

from .alignment import GoldSet, dates_gold
from .corpus import split_path
from .evaluate import Evaluation, evaluate_run
from .figure import buckets_png, sample_heatmaps
from .run_summary import PathNames, curve_charts, run_title, shown_config

if TYPE_CHECKING:
    from .config import DecodeConfig
    from .protocol import TranslatingRun

BUCKET_CAPTION = "BLEU by source length (analogue of Bahdanau et al. 2015, Fig. 2)"


def evaluation_results(evaluation: Evaluation) -> list[Result]:
    """The report's results: exact match (the dates task's own metric, first when the run has
    it), BLEU/chrF with signatures, AER per gold set, BLEU by length."""
    scores = evaluation.scores
    exact = [] if evaluation.exact_match is None else [
        ("exact match %", f"{evaluation.exact_match:.2f}", "the output equals its reference")]
    results = [Result("Scores", [
        ("metric", "score", "sacreBLEU signature"), *exact,
        ("BLEU", f"{scores.bleu:.2f}", scores.bleu_signature),
        ("chrF", f"{scores.chrf:.2f}", scores.chrf_signature),
        ("BLEU (13a, lowercased)", f"{scores.bleu_lowercase:.2f}",
         scores.bleu_lowercase_signature),
    ], note=f"on {scores.sentences:,} sentences, each against one reference")]
    if evaluation.alignments:
        results.append(Result("Alignment error rate", [
            ("gold set", "unit", "pairs", "skipped", "AER")] + [
            (score.name, score.unit, f"{score.pairs:,}", score.skipped, f"{score.aer:.4f}")
            for score in evaluation.alignments],
            note=f"AER of the {evaluation.alignments[0].method} (lower is better; pairs whose "
                 f"words the model's vocabulary splits differently are skipped)"))
    results.append(length_result(evaluation))
    return results


def length_result(evaluation: Evaluation) -> Result:
    """BLEU by source length: the buckets that hold sentences, and their bars when there are
    two or more to compare; the note names the empty buckets."""
    rows, buckets = filled(evaluation.buckets), evaluation.buckets
    chart = worth_a_chart([row.bleu for row in buckets])
    notes = [empty_note(buckets)] if empty_note(buckets) else []
    if not chart and rows:
        notes.append(f"every sentence is in the {rows[0].label} bucket, so there is no chart")
    note = "; ".join(notes)
    return Result("BLEU by source length", [("source words", "sentences", "BLEU")] + [
        (row.label, f"{row.count:,}", "-" if row.bleu is None else f"{row.bleu:.2f}")
        for row in rows], image=buckets_png(buckets) if chart else None,
        caption=BUCKET_CAPTION, note=note[:1].upper() + note[1:] + "." if note else "")


def validation_pairs(run: TranslatingRun) -> tuple[list[str], list[str], Path, Path]:
    """The run's validation pairs as training scored them (the first data.valid_sentences),
    with the source and reference files."""
    data = run.config.data
    src_path = split_path(data, data.valid, data.src_lang)
    ref_path = split_path(data, data.valid, data.tgt_lang)
    pairs = read_parallel(src_path, ref_path)[: data.valid_sentences]
    return [source for source, _ in pairs], [target for _, target in pairs], src_path, ref_path


def sample_examples(run: TranslatingRun, sources: list[str], references: list[str],
                    evaluation: Evaluation, count: int, decode: DecodeConfig) -> list[Example]:
    """The first `count` pairs with a non-empty source: source, reference and output, with the
    output's heatmap when the model attends."""
    chosen = [k for k, source in enumerate(sources) if source.strip()][:count]
    drawn = sample_heatmaps(run, [sources[k] for k in chosen], decode)
    examples = []
    for number, k in enumerate(chosen):
        output, image, caption = evaluation.hypotheses[k], None, ""
        if drawn:
            output, image = drawn[number].output, drawn[number].png
            caption = f"drawn smaller: {drawn[number].note}" if drawn[number].note else ""
        lines = [("source", sources[k]), ("reference", references[k]), ("output", output)]
        examples.append(Example(lines, image, caption))
    return examples


def _samples_note(run: TranslatingRun, count: int, beam: int) -> str:
    if not count:
        return ""
    search = "greedy search" if beam == 1 else f"beam search (beam {beam})"
    where = ("Each heatmap shows where every output unit looked: a row per output unit, a "
             "column per source unit, white = all attention." if run.has_attention
             else "This model has no attention, so there are no heatmaps.")
    return f"The first {count} evaluated sentences, translated by {search}. {where}"


def _lead(run: TranslatingRun, names: PathNames, evaluated: str, beam: int) -> str:
    step = run.meta.get("step")
    steps = f" (step {step:,})" if isinstance(step, int) else ""
    search = "greedy search" if beam == 1 else f"beam {beam}"
    return f"Checkpoint {run.checkpoint}{steps}, {search}; {names.hide(evaluated)}."


def write_run_report(run: TranslatingRun, path: str | os.PathLike, *,
                     sources: list[str] | None = None, references: list[str] | None = None,
                     src_path: str | os.PathLike | None = None,
                     ref_path: str | os.PathLike | None = None, decode: DecodeConfig | None = None,
                     samples: int = 3, golds: Sequence[GoldSet] = (),
                     progress: bool = False) -> Path:
    """One self-contained HTML page of a run. Without `sources`/`references` it evaluates on
    the run's validation split, and leaves the evaluation out (saying why) when that cannot be
    read. AER is computed on the dates task's gold of the evaluated pairs when there is one
    (golds.dates_gold), then on each of `golds` (e.g. golds.rwth_gold_for_run(run)). `path` is
    checked before the evaluation and written whole at the end (WriteError otherwise).
    `progress`: bars on a terminal while it evaluates."""
    path = check_output_path(path)
    names = PathNames(run.path)
    decode = decode or run.config.decode
    beam = decode.beam
    first_lines, results, examples = False, [], []
    if sources is None:
        try:
            sources, references, src_path, ref_path = validation_pairs(run)
            first_lines = True
            evaluated = (f"evaluated on {len(sources):,} pairs of the validation split "
                         f"({names.pair(src_path, ref_path)})")
        except DataError as error:
            evaluated = f"not evaluated: {error}; pass --src and --ref"
    else:
        evaluated = f"evaluated on {len(sources):,} pairs ({names.pair(src_path, ref_path)})"
    if sources is not None:
        assert references is not None  # given with sources, or both the validation split's
        dates = dates_gold(run, src_path, sources, references, first_lines=first_lines)
        chosen = [replace(gold, name=names.hide(gold.name))
                  for gold in (dates, *golds) if gold is not None]
        evaluation = evaluate_run(run, sources, references,
                                  decode=decode,
                                  golds=chosen if run.has_attention else [],
                                  progress=progress)
        results = evaluation_results(evaluation)
        if chosen and not run.has_attention:
            results.insert(1, Result("Alignment error rate", note="This model has no "
                                     "attention, so it gives no alignments to score on "
                                     f"{', '.join(gold.name for gold in chosen)}."))
        examples = sample_examples(run, sources, references, evaluation, samples, decode)
    page = report_html(title=run_title(run), lead=_lead(run, names, evaluated, beam),
                       results=results, examples=examples,
                       examples_note=_samples_note(run, len(examples), beam),
                       charts=curve_charts(read_curves(run.path / METRICS_FILE),
                                           run.config.train.early_stopping.metric),
                       config=shown_config(config_to_dict(run.config), names))
    with atomic_output(path) as file:
        file.write(page)
    return path
