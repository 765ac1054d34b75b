"""Which gold alignments a run's AER is computed on, each chosen explicitly by the caller.

- a gold file for the evaluated pairs (`evaluate --align-gold`): alignment.gold_from_file;
- the dates task's `{split}.align` beside the source file: dates_gold;
- the RWTH German-English set from a given folder (`--rwth DIR`), or else from
  `$ATTNLAB_DATA/rwth-deen-gold` when ATTNLAB_DATA is set and that folder exists: rwth_gold_for_run.

Nothing here guesses where data lies: without `--rwth` and ATTNLAB_DATA there is no RWTH gold.
A model without attention gets AER only on a gold set asked for by name (a file or a folder).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from .alignment import GoldSet, dates_gold_path, gold_from_file, rwth_gold
from .loading import TrainedRun

DATA_VARIABLE = "ATTNLAB_DATA"
RWTH_NAME = "rwth-deen-gold"
GERMAN_ENGLISH = (("de", "en"), ("en", "de"))


def dates_gold(run: TrainedRun, src_path: str | os.PathLike | None, sources: list[str],
               targets: list[str], *, first_lines: bool = False) -> GoldSet | None:
    """The dates task's gold of the pairs (sources[k], targets[k]) read from `src_path`: the
    `.align` file beside it (see dates_gold_path). None when there is no such file, no
    `src_path`, or the model has no attention. `first_lines`: see gold_from_file."""
    if not run.has_attention or src_path is None:
        return None
    path = dates_gold_path(src_path)
    if not path.is_file():
        return None
    gold = gold_from_file(path, sources, targets, first_lines=first_lines)
    return replace(gold, name=f"dates task gold {gold.name}")


def environment_rwth_dir() -> Path | None:
    """$ATTNLAB_DATA/rwth-deen-gold when ATTNLAB_DATA is set and that folder exists, else None."""
    root = os.environ.get(DATA_VARIABLE)
    if not root:
        return None
    directory = Path(root) / RWTH_NAME
    return directory if directory.is_dir() else None


def rwth_gold_for_run(run: TrainedRun,
                      directory: str | os.PathLike | None = None) -> GoldSet | None:
    """The RWTH gold set in the run's direction (English the source side for an en-de run).

    From `directory` when given, for any run: it was asked for. Without it, from
    environment_rwth_dir() for a German-English (de-en or en-de) run with attention, and None
    when that is not such a run or the variable or folder is missing.
    """
    languages = (run.config.data.src_lang, run.config.data.tgt_lang)
    if directory is None:
        if not run.has_attention or languages not in GERMAN_ENGLISH:
            return None
        directory = environment_rwth_dir()
        if directory is None:
            return None
    return rwth_gold(directory, reverse=languages == ("en", "de"))
