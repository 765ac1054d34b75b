"""A run's figures: alignment heatmaps of translations (Bahdanau et al. 2015, Fig. 3) of a
sentence, of a saved alignment record and of report samples; and BLEU by source length (the
analogue of their Fig. 2).

Which weights and labels a heatmap shows is decided once, in heatmap_parts; attnlab.viz draws.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, cast

import numpy as np
from PIL import Image

from attnlab.errors import DataError, UserError
from attnlab.eval import BucketRow
from attnlab.files import atomic_output, check_output_path
from attnlab.viz import (
    alignment_figure,
    alignment_matrix_figure,
    bleu_by_length_png,
    heads_grid_figure,
    heatmap_scale,
    image_format,
    write_figure,
)

from .alignment import attention_units
from .heads import NO_HEADS, HeadChoice, HeadedTranslation, checked_choice, head_shape, headed
from .labels import LabelledAttention
from .records import labelled_from_record, read_record
from .translate import TranslationResult

if TYPE_CHECKING:
    from .config import DecodeConfig
    from .protocol import TranslatingRun


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


def check_image_path(path: str | os.PathLike) -> str:
    """The image format of `path` ("png", "svg", "pdf"), checked before any work together with
    its folder: WriteError for a folder that is missing or a file, or a path that is a folder
    (attnlab.files.check_output_path), DataError for another suffix."""
    check_output_path(path)
    try:
        return image_format(path)
    except ValueError as error:
        raise DataError(str(error)) from None


def axis_names(pieces: bool, characters: bool = False) -> tuple[str, str]:
    """The heatmap's axis names: ("source words", "output words"), or pieces, or characters
    (the pieces of a character-level run)."""
    unit = ("characters" if characters else "pieces") if pieces else "words"
    return f"source {unit}", f"output {unit}"


def heatmap_title(source: str, output: str) -> str:
    """The sentence above its translation (two lines, so the title wraps at the heatmap's
    width rather than widening it)."""
    return f"{source}\n-> {output}"


def plot_labelled(labelled: LabelledAttention, path: str | os.PathLike, *, pieces: bool = False,
                  title: str | None = None, characters: bool = False) -> str | None:
    """The heatmap of one translation to a file (.png, .svg or .pdf), written whole or not at
    all; `characters`: its pieces are characters. Returns how it was drawn smaller when it is
    too large for a screen (else None)."""
    format = check_image_path(path)
    weights, sources, targets = heatmap_parts(labelled, pieces)
    figure = alignment_matrix_figure(weights, sources, targets, title=title,
                                     axis_names=axis_names(pieces, characters))
    with atomic_output(path, "wb") as file:
        write_figure(figure, cast(BinaryIO, file), format)  # opened "wb"
    return heatmap_scale(*np.shape(weights)).note


def heatmap_png(labelled: LabelledAttention, *, pieces: bool = False,
                title: str | None = None, characters: bool = False) -> bytes:
    """The same heatmap as PNG bytes (RGB), for embedding."""
    weights, sources, targets = heatmap_parts(labelled, pieces)
    pixels = alignment_figure(weights, sources, targets, title=title,
                              axis_names=axis_names(pieces, characters))
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def plot_sentence(run: TranslatingRun, sentence: str, path: str | os.PathLike, *,
                  pieces: bool | None = None, layer: int | str | None = None,
                  head: int | str | None = None, heads_grid: bool = False,
                  decode: DecodeConfig | None = None) -> tuple[TranslationResult, str | None]:
    """Translate `sentence` and draw its heatmap; pieces=None draws characters for a
    character-level run and words otherwise. A Transformer's `layer` and `head` (from 1, head
    "mean"; heads.checked_choice), or heads_grid: every layer x head (plot_heads_grid). Returns
    the translation and plot_labelled's note."""
    check_image_path(path)  # before the translation, which may take long
    pieces = run.character_level if pieces is None else pieces
    if heads_grid and not (layer is None and head is None):
        raise UserError("--heads-grid draws every layer and head: give it without --layer "
                        "and --head")
    choice = checked_choice(run.model, layer, head)
    if heads_grid and head_shape(run.model) is None:
        raise UserError(NO_HEADS)
    result = next(iter(run.translate([sentence], decode)))
    title = heatmap_title(sentence, result.text)
    if heads_grid or choice != HeadChoice():
        result = headed(run.model, run.vocabs, sentence, result, choice)
    if isinstance(result, HeadedTranslation) and heads_grid:
        return result, plot_heads_grid(result, path, pieces=pieces, title=title,
                                       characters=run.character_level)
    if isinstance(result, HeadedTranslation):
        title = f"{title}\n({choice.describe(result.heads.shape[0])})"
    note = plot_labelled(result, path, pieces=pieces, title=title,
                         characters=run.character_level)
    return result, note


def plot_heads_grid(result: HeadedTranslation, path: str | os.PathLike, *, pieces: bool,
                    title: str, characters: bool = False) -> str | None:
    """Every layer x head of one translation (viz.heads_grid_figure) to a file, written whole
    or not at all. Returns None (the grid draws every cell; a long sentence makes it large)."""
    format = check_image_path(path)
    heads = result.heads if pieces else result.word_heads
    source = result.source_pieces if pieces else result.source_words
    target = result.target_pieces if pieces else result.target_words
    if not np.asarray(heads).size:
        raise DataError("nothing to draw: the sentence or its translation is empty")
    unit = axis_names(pieces, characters)[0].removeprefix("source ")
    figure = heads_grid_figure(heads, source, target, title=title, units=unit)
    with atomic_output(path, "wb") as file:
        write_figure(figure, cast(BinaryIO, file), format)  # opened "wb"
    return None


def plot_record(json_path: str | os.PathLike, line: int, path: str | os.PathLike, *,
                pieces: bool | None = None) -> tuple[dict, str | None]:
    """Draw the heatmap of record `line` of a JSON alignment file (see records.py);
    pieces=None follows the record's "characters". Returns the record and plot_labelled's note."""
    check_image_path(path)
    record = read_record(json_path, line)
    characters = bool(record.get("characters"))
    pieces = characters if pieces is None else pieces
    title = heatmap_title(record.get("source", ""), record.get("translation", ""))
    return record, plot_labelled(labelled_from_record(record), path, pieces=pieces, title=title,
                                 characters=characters)


@dataclass(frozen=True)
class SampleHeatmap:
    """One translated sample: its output and the PNG of its heatmap (None when there is
    nothing to draw), with how the heatmap was drawn smaller (else None)."""

    output: str
    png: bytes | None
    note: str | None


def sample_heatmaps(run: TranslatingRun, sources: list[str],
                    decode: DecodeConfig | None = None) -> list[SampleHeatmap]:
    """Translate `sources` and draw each one's heatmap, at character level for a
    character-level run, else at word level; [] for a model without attention (nothing is
    translated). An empty translation has no heatmap."""
    if not run.has_attention or not sources:
        return []
    samples = []
    pieces = characters = run.character_level
    for result in run.translate(sources, decode):
        try:
            weights = heatmap_parts(result, pieces)[0]
        except DataError:  # nothing to draw
            samples.append(SampleHeatmap(result.text, None, None))
            continue
        png = heatmap_png(result, pieces=pieces, characters=characters)
        samples.append(SampleHeatmap(result.text, png, heatmap_scale(*np.shape(weights)).note))
    return samples


def buckets_png(rows: Sequence[BucketRow]) -> bytes:
    """Bars of corpus BLEU per source-length bucket as PNG bytes, sentence counts above them;
    empty buckets are left out (viz.bleu_by_length_png)."""
    return bleu_by_length_png([row.label for row in rows], [row.count for row in rows],
                              [row.bleu for row in rows])
