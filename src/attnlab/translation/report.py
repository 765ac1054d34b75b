"""The self-contained HTML report of a run: notes, config, training curves, scores, BLEU by
length (Bahdanau et al. 2015, Fig. 2), AER and sample heatmaps, put together from the library's
pieces (train.monitor.read_curves, viz, and this recipe's evaluate, golds and figure)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from attnlab.config import config_to_dict
from attnlab.data import read_parallel
from attnlab.errors import DataError
from attnlab.files import atomic_output, check_output_path
from attnlab.train.monitor import METRICS_FILE, read_curves
from attnlab.viz import report_html

from .alignment import GoldSet
from .corpus import split_path
from .evaluate import Evaluation, evaluate_run
from .figure import buckets_png, sample_heatmaps
from .golds import dates_gold
from .loading import TrainedRun

BUCKET_CAPTION = "BLEU by source length (analogue of Bahdanau et al. 2015, Fig. 2)"


def evaluation_tables(evaluation: Evaluation) -> dict[str, list[tuple]]:
    """The report's tables: BLEU/chrF with signatures, BLEU by length, and AER."""
    scores = evaluation.scores
    tables = {"Scores": [
        ("metric", "score", "sacreBLEU signature"),
        ("BLEU", f"{scores.bleu:.2f}", scores.bleu_signature),
        ("chrF", f"{scores.chrf:.2f}", scores.chrf_signature),
        ("BLEU (13a, lowercased)", f"{scores.bleu_lowercase:.2f}",
         scores.bleu_lowercase_signature),
        ("sentences", scores.sentences, ""),
    ], "BLEU by source length": [("source words", "sentences", "BLEU")] + [
        (row.label, row.count, "-" if row.bleu is None else f"{row.bleu:.2f}")
        for row in evaluation.buckets]}
    if evaluation.alignments:
        tables["Alignment error rate"] = [("gold", "unit", "pairs", "AER")] + [
            (score.name, score.unit, score.pairs, f"{score.aer:.4f}")
            for score in evaluation.alignments]
    return tables


def validation_pairs(run: TrainedRun) -> tuple[list[str], list[str], Path]:
    """The run's validation pairs as training scored them (the first data.valid_sentences)."""
    data = run.config.data
    src_path = split_path(data, data.valid, data.src_lang)
    pairs = read_parallel(src_path, split_path(data, data.valid, data.tgt_lang))
    pairs = pairs[: data.valid_sentences]
    return [source for source, _ in pairs], [target for _, target in pairs], src_path


def write_run_report(run: TrainedRun, path: str | os.PathLike, *,
                     sources: list[str] | None = None, references: list[str] | None = None,
                     src_path: str | os.PathLike | None = None, beam: int | None = None,
                     samples: int = 3, golds: Sequence[GoldSet] = ()) -> Path:
    """One self-contained HTML page of a run. Without `sources`/`references` it evaluates on
    the run's validation split, and leaves the evaluation out (with a note) when that cannot be
    read. AER is computed on the dates task's gold of the evaluated pairs when there is one
    (golds.dates_gold), then on each of `golds` (e.g. golds.rwth_gold_for_run(run)). `path` is
    checked before the evaluation and written whole at the end (WriteError otherwise)."""
    path = check_output_path(path)
    notes = [f"run directory: {run.directory}",
             f"checkpoint: {run.checkpoint} (step {run.meta.get('step', '?')})"]
    first_lines = False
    if sources is None:
        try:
            sources, references, src_path = validation_pairs(run)
            first_lines = True
            notes.append(f"evaluated on the validation split: {len(sources)} pairs of {src_path}")
        except DataError as error:
            notes.append(f"no evaluation: {error}; pass --src and --ref")
    tables, images = {}, {}
    if sources is not None:
        dates = dates_gold(run, src_path, sources, references, first_lines=first_lines)
        evaluation = evaluate_run(run, sources, references, beam=beam,
                                  golds=[gold for gold in (dates, *golds) if gold is not None])
        tables = evaluation_tables(evaluation)
        notes.append(evaluation.format())
        images[BUCKET_CAPTION] = buckets_png(evaluation.buckets)
        images.update(sample_heatmaps(run, sources, samples, beam))
    page = report_html(title=f"attnlab run {run.directory}", config=config_to_dict(run.config),
                       curves=read_curves(run.directory / METRICS_FILE), tables=tables,
                       images=images, notes="\n".join(notes))
    with atomic_output(path) as file:
        file.write(page)
    return path
