"""Alignment records: one JSON line per translated line (`translate --alignments F --format
json`), written here and read back here (for `plot --json F --line N`).

A record holds the input line number (1-based) and text, the translation, its score and
log-probability, "characters" (the unit of its links), the pieces and words of both sides, both
attention matrices (target x source, "</s>" included; null for a model without attention) and,
when there is attention, its argmax links as a Pharaoh line ("alignment"); an ensemble's, when
asked for, each member's own piece attention too ("member_attention").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from attnlab.errors import DataError

from .alignment import argmax_links, links_line
from .labels import LabelledAttention
from .translate import TranslationResult

LABELLED_FIELDS = ("source_pieces", "target_pieces", "attention", "source_words",
                   "target_words", "word_attention")
DECIMALS = 5  # attention weights in JSON: enough for any plot, a third of the full size


def _matrix(weights) -> list | None:
    return None if weights is None else np.round(np.asarray(weights, float), DECIMALS).tolist()


def alignment_record(line: int, source: str, result: TranslationResult, *,
                     characters: bool = False) -> dict:
    """The record of input line `line` (1-based) with text `source` and its translation
    `result`; links over characters when `characters`, else over words."""
    record = {"line": line, "source": source, "translation": result.text,
              "score": result.score, "log_prob": result.log_prob, "characters": characters}
    for name in LABELLED_FIELDS:
        value = getattr(result, name)
        record[name] = _matrix(value) if name.endswith("attention") else list(value)
    if result.attention is not None:
        record["alignment"] = links_line(argmax_links(result, characters))
    if result.member_attention is not None:  # an ensemble's, asked for: pieces, member order
        record["member_attention"] = [_matrix(weights) for weights in result.member_attention]
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
    """The pieces, words and attention arrays (T, S) of an alignment record."""
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
