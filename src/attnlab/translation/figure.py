"""A run's figures: alignment heatmaps of translations (Bahdanau et al. 2015, Fig. 3) of a
sentence, of a saved alignment record and of report samples; and BLEU by source length (the
analogue of their Fig. 2).

Which weights and labels a heatmap shows is decided once, in heatmap_parts; attnlab.viz draws.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from attnlab.errors import DataError
from attnlab.eval import BucketRow
from attnlab.viz import alignment_figure, bleu_by_length_png, plot_alignment

from .alignment import attention_units
from .labels import LabelledAttention
from .loading import TrainedRun
from .records import labelled_from_record, read_record
from .translate import TranslationResult

IMAGE_SUFFIXES = (".png", ".svg", ".pdf")


def heatmap_parts(labelled: LabelledAttention, pieces: bool
                  ) -> tuple[np.ndarray, list[str], list[str]]:
    """(weights (T, S), the S source labels, the T target labels) at piece or word level, "</s>"
    included; DataError when there is nothing to draw."""
    weights, sources, targets = attention_units(labelled, pieces)
    if weights is None:
        raise DataError("this model has no attention, so there is no alignment to draw")
    if np.asarray(weights).size == 0:
        raise DataError("nothing to draw: the sentence or its translation is empty")
    return weights, sources, targets


def plot_labelled(labelled: LabelledAttention, path: str | os.PathLike, *, pieces: bool = False,
                  title: str | None = None) -> Path:
    """The heatmap of one translation to a file (.png, .svg or .pdf)."""
    if Path(path).suffix.lower() not in IMAGE_SUFFIXES:
        raise DataError(f"cannot tell the image format of {path}: use .png, .svg or .pdf")
    weights, sources, targets = heatmap_parts(labelled, pieces)
    return plot_alignment(weights, sources, targets, path, title=title)


def heatmap_png(labelled: LabelledAttention, *, pieces: bool = False,
                title: str | None = None) -> bytes:
    """The same heatmap as PNG bytes (RGB), for embedding."""
    weights, sources, targets = heatmap_parts(labelled, pieces)
    buffer = io.BytesIO()
    Image.fromarray(alignment_figure(weights, sources, targets, title=title)).save(buffer, "PNG")
    return buffer.getvalue()


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
    """Draw the heatmap of record `line` of a JSON alignment file (see records.py);
    pieces=None follows the record's "characters". Returns the record."""
    record = read_record(json_path, line)
    pieces = bool(record.get("characters")) if pieces is None else pieces
    title = f"{record.get('source', '')}  ->  {record.get('translation', '')}"
    plot_labelled(labelled_from_record(record), path, pieces=pieces, title=title)
    return record


def sample_heatmaps(run: TrainedRun, sources: list[str], count: int = 3,
                    beam: int | None = None) -> dict[str, bytes]:
    """PNG heatmaps of the translations of the first `count` non-empty sources, by caption; at
    character level for a character-level run, else at word level. An empty translation has
    no heatmap; a model without attention has none at all (nothing is translated)."""
    chosen = [source for source in sources if source.strip()][:count]
    if not run.has_attention or not chosen:
        return {}
    images = {}
    results = run.translate(chosen, beam=beam)
    for number, (source, result) in enumerate(zip(chosen, results, strict=True), start=1):
        try:
            png = heatmap_png(result, pieces=run.character_level)
        except DataError:  # nothing to draw
            continue
        images[f"sample {number}: {source}  ->  {result.text}"] = png
    return images


def buckets_png(rows: Sequence[BucketRow]) -> bytes:
    """Bars of corpus BLEU per source-length bucket as PNG bytes, sentence counts above them;
    empty buckets are left out (viz.bleu_by_length_png)."""
    return bleu_by_length_png([row.label for row in rows], [row.count for row in rows],
                              [row.bleu for row in rows])
