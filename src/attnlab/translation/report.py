"""What a run's outputs look like on disk: alignment records (JSON lines), heatmaps, the
BLEU-by-length plot (Bahdanau et al. 2015, Fig. 2) and the self-contained HTML report."""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from attnlab.config import config_to_dict
from attnlab.data import read_parallel
from attnlab.errors import DataError
from attnlab.eval import BucketRow
from attnlab.viz import alignment_figure, plot_alignment, write_report

from .corpus import split_path
from .evaluate import Evaluation, argmax_links, choose_golds, evaluate_run, pharaoh_line
from .labels import LabelledAttention
from .loading import TrainedRun
from .translate import TranslationResult

LABELLED_FIELDS = ("source_pieces", "target_pieces", "attention", "source_words",
                   "target_words", "word_attention")
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")
DECIMALS = 5  # attention weights in JSON: enough for any plot, a third of the full size


def _matrix(weights) -> list | None:
    return None if weights is None else np.round(np.asarray(weights, float), DECIMALS).tolist()


def alignment_record(line: int, source: str, result: TranslationResult, *,
                     characters: bool = False) -> dict:
    """One JSON line of `translate --alignments --format json`: the input line number (1-based)
    and text, the translation, its score, pieces, words, both attention matrices (target x
    source, "</s>" included) and its argmax links ("alignment", Pharaoh, over characters when
    `characters`, else words)."""
    record = {"line": line, "source": source, "translation": result.text,
              "score": result.score, "log_prob": result.log_prob, "characters": characters}
    for name in LABELLED_FIELDS:
        value = getattr(result, name)
        record[name] = _matrix(value) if name.endswith("attention") else list(value)
    if result.attention is not None:
        record["alignment"] = pharaoh_line(argmax_links(result, characters))
    return record


def read_record(path: str | os.PathLike, line: int) -> dict:
    """Record `line` (1-based) of a JSON-lines alignment file."""
    path = Path(path)
    if line < 1:
        raise DataError(f"line numbers start at 1, got {line}")
    try:
        with open(path, encoding="utf-8") as file:
            text = next((text for number, text in enumerate(file, 1) if number == line), None)
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read {path}: {error}") from None
    if text is None:
        raise DataError(f"{path} has fewer than {line} lines")
    try:
        record = json.loads(text)
    except ValueError:
        raise DataError(f"{path} line {line} is not JSON (write it with "
                        f"attnlab translate --alignments FILE --format json)") from None
    missing = [name for name in LABELLED_FIELDS if name not in record]
    if missing:
        raise DataError(f"{path} line {line} lacks {', '.join(missing)}: not an alignment record")
    return record


def labelled_from_record(record: dict) -> LabelledAttention:
    """The pieces, words and attention arrays of an alignment record."""
    values = {name: record[name] for name in LABELLED_FIELDS}
    for name, level in (("attention", "pieces"), ("word_attention", "words")):
        if values[name] is None:
            continue
        shape = (len(values[f"target_{level}"]), len(values[f"source_{level}"]))
        array = np.asarray(values[name], dtype=float)
        if array.size == 0:  # an empty line: (0, S) was written as []
            array = array.reshape(shape) if 0 in shape else array
        if array.shape != shape:
            raise DataError(f"{name} of record {record.get('line', '?')} has shape {array.shape}"
                            f" but there are {shape[0]} target and {shape[1]} source {level}")
        values[name] = array
    return LabelledAttention(**values)


def heatmap_parts(labelled: LabelledAttention, pieces: bool) -> tuple:
    """(weights, source labels, target labels) at piece or word level; DataError when there
    is nothing to draw."""
    if pieces:
        parts = (labelled.attention, labelled.source_pieces, labelled.target_pieces)
    else:
        parts = (labelled.word_attention, labelled.source_words, labelled.target_words)
    if parts[0] is None:
        raise DataError("this model has no attention, so there is no alignment to draw")
    if np.asarray(parts[0]).size == 0:
        raise DataError("nothing to draw: the sentence or its translation is empty")
    return parts


def plot_labelled(labelled: LabelledAttention, path: str | os.PathLike, *, pieces: bool = False,
                  title: str | None = None) -> Path:
    """The alignment heatmap (Bahdanau et al. 2015, Fig. 3) of one translation to a file
    (.png, .svg or .pdf)."""
    if Path(path).suffix.lower() not in IMAGE_SUFFIXES:
        raise DataError(f"cannot tell the image format of {path}: use .png, .svg or .pdf")
    weights, sources, targets = heatmap_parts(labelled, pieces)
    return plot_alignment(weights, sources, targets, path, title=title)


def plot_sentence(run: TrainedRun, sentence: str, path: str | os.PathLike, *,
                  pieces: bool | None = None, beam: int | None = None) -> TranslationResult:
    """Translate `sentence` and draw its heatmap; pieces=None draws characters for a
    character-level run and words otherwise. Returns the translation."""
    result = next(iter(run.translate([sentence], beam=beam)))
    plot_labelled(result, path, pieces=run.character_level if pieces is None else pieces,
                  title=f"{sentence}  ->  {result.text}")
    return result


def plot_record(json_path: str | os.PathLike, line: int, path: str | os.PathLike, *,
                pieces: bool | None = None) -> dict:
    """Draw the heatmap of record `line` of a JSON alignment file (translate --alignments
    --format json); pieces=None follows the record's "characters". Returns the record."""
    record = read_record(json_path, line)
    pieces = bool(record.get("characters")) if pieces is None else pieces
    title = f"{record.get('source', '')}  ->  {record.get('translation', '')}"
    plot_labelled(labelled_from_record(record), path, pieces=pieces, title=title)
    return record


def heatmap_png(labelled: LabelledAttention, *, pieces: bool = False,
                title: str | None = None) -> bytes:
    """The same heatmap as PNG bytes, for embedding."""
    weights, sources, targets = heatmap_parts(labelled, pieces)
    buffer = io.BytesIO()
    Image.fromarray(alignment_figure(weights, sources, targets, title=title)).save(buffer, "PNG")
    return buffer.getvalue()


def bleu_by_length_png(rows: Sequence[BucketRow], title: str = "BLEU by source length") -> bytes:
    """Bars of corpus BLEU per source-length bucket, sentence counts above them (the analogue
    of Bahdanau et al. 2015, Fig. 2); empty buckets are left out."""
    rows = [row for row in rows if row.bleu is not None]
    figure = Figure(figsize=(1.2 + 0.9 * max(len(rows), 3), 3.2), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = range(len(rows))
    bars = axes.bar(positions, [row.bleu for row in rows], color="#4c78a8", width=0.6)
    axes.plot(positions, [row.bleu for row in rows], color="#e45756", marker="o")
    axes.bar_label(bars, [f"n={row.count}" for row in rows], fontsize=8, padding=2)
    axes.set_xticks(list(positions), [row.label for row in rows])
    axes.set_xlabel("source sentence length (words)")
    axes.set_ylabel("BLEU")
    top = 100.0 if any(row.bleu > 60 for row in rows) else 60.0  # room for the count labels
    axes.set_ylim(0, top * 1.08)
    axes.set_title(title, fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def read_curves(path: str | os.PathLike) -> dict[str, list[tuple[float, float]]]:
    """Training curves from metrics.jsonl: "train loss", "train lr" and every "valid" metric,
    each [(step, value), ...]. Lines that are not JSON records (a crash mid-write) are skipped."""
    path = Path(path)
    curves: dict[str, list[tuple[float, float]]] = {}
    if not path.is_file():
        return curves
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(text)
            kind, step = record["kind"], float(record["step"])
        except (ValueError, KeyError, TypeError):
            continue
        names = ("loss", "lr") if kind == "train" else [k for k in record if k not in
                                                         ("kind", "step")]
        for name in names:
            value = record.get(name)
            if isinstance(value, (int, float)) and math.isfinite(value):
                curves.setdefault(f"{kind} {name}", []).append((step, float(value)))
    return curves


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


def sample_heatmaps(run: TrainedRun, sources: list[str], count: int = 3,
                    beam: int | None = None) -> dict[str, bytes]:
    """Heatmaps of the translations of the first `count` non-empty sources, by caption; at
    character level for a character-level run, else at word level."""
    chosen = [source for source in sources if source.strip()][:count]
    if not run.has_attention or not chosen:
        return {}
    images = {}
    for number, (source, result) in enumerate(zip(chosen, run.translate(chosen, beam=beam),
                                                  strict=True), start=1):
        if result.attention is not None and len(result.target_pieces):
            caption = f"sample {number}: {source}  ->  {result.text}"
            images[caption] = heatmap_png(result, pieces=run.character_level)
    return images


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
                     samples: int = 3, rwth: str | os.PathLike | None = None,
                     use_rwth: bool = True) -> Path:
    """One self-contained HTML page of a run: notes, config, training curves, scores, BLEU by
    length, AER and sample heatmaps. Without `sources`/`references` it evaluates on the run's
    validation split, and leaves the evaluation out (with a note) when that cannot be read."""
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
        golds = choose_golds(run, sources, references, src_path=src_path, rwth=rwth,
                             use_rwth=use_rwth, first_lines=first_lines)
        evaluation = evaluate_run(run, sources, references, beam=beam, golds=golds)
        tables = evaluation_tables(evaluation)
        notes.append(evaluation.format())
        images["BLEU by source length (analogue of Bahdanau et al. 2015, Fig. 2)"] = (
            bleu_by_length_png(evaluation.buckets))
        images.update(sample_heatmaps(run, sources, samples, beam))
    return write_report(path, title=f"attnlab run {run.directory}",
                        config=config_to_dict(run.config),
                        curves=read_curves(run.directory / "metrics.jsonl"), tables=tables,
                        images=images, notes="\n".join(notes))
