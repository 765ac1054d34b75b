"""Which gold alignments a run's AER is computed on, each chosen explicitly by the caller.

- a gold file for the evaluated pairs (`evaluate --align-gold`): alignment.gold_from_file;
- the dates task's `{split}.align` beside the source file: dates_gold;
- the RWTH German-English set from a given folder (`--rwth DIR`), or else from
  `$ATTNLAB_DATA/rwth-deen-gold` when ATTNLAB_DATA is set and that folder exists: rwth_gold_for_run.

Nothing here guesses where data lies: without `--rwth` and ATTNLAB_DATA there is no RWTH gold.
A model without attention gets AER only on a gold set asked for by name (a file or a folder).
choose_golds puts these together for `evaluate` and says in one line what it chose, or why
there is no gold set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
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


@dataclass
class GoldChoice:
    """The gold sets a run's AER is computed on, and why there are none when there are none."""

    golds: list[GoldSet] = field(default_factory=list)
    reason: str = ""

    def line(self) -> str:
        """'AER on: <gold>, <n> pairs; ...' or 'AER: none (<reason>)'."""
        if not self.golds:
            return f"AER: none ({self.reason})"
        return "AER on: " + "; ".join(f"{gold.name}, {len(gold.sources)} pairs"
                                      for gold in self.golds)


def choose_golds(run: TrainedRun, src_path: str | os.PathLike | None, sources: list[str],
                 targets: list[str], *, align_gold: str | os.PathLike | None = None,
                 one_indexed: bool = False, rwth: str | os.PathLike | None = None,
                 use_rwth: bool = True) -> GoldChoice:
    """The gold sets that apply to evaluating `run` on (sources[k], targets[k]) read from
    `src_path`: the `align_gold` file of these pairs, else the dates task's gold beside
    `src_path`; then the RWTH set (rwth_gold_for_run: `rwth`, else $ATTNLAB_DATA's for a
    German-English run with attention) unless not `use_rwth`."""
    pairs: GoldSet | None
    if align_gold is not None:
        pairs = gold_from_file(align_gold, sources, targets, one_indexed=one_indexed)
    else:
        pairs = dates_gold(run, src_path, sources, targets)
    found = rwth_gold_for_run(run, rwth) if use_rwth else None
    golds = [gold for gold in (pairs, found) if gold is not None]
    return GoldChoice(golds, "" if golds else _no_gold_reason(run, src_path, use_rwth))


def _no_gold_reason(run: TrainedRun, src_path: str | os.PathLike | None, use_rwth: bool) -> str:
    languages = (run.config.data.src_lang, run.config.data.tgt_lang)
    if not run.has_attention:
        return "this model has no attention, so its alignments cannot be scored"
    if languages in GERMAN_ENGLISH:
        if not use_rwth:
            return "--no-rwth, and no other gold set was given"
        return (f"no RWTH gold set: give --rwth DIR, or set {DATA_VARIABLE} to a folder "
                f"holding {RWTH_NAME}/")
    beside = (f"no {dates_gold_path(src_path).name} beside {src_path}, "
              if src_path is not None else "")
    return (f"no gold alignments for a {'-'.join(languages)} run ({beside}not German-English); "
            f"give --align-gold FILE or --rwth DIR")
