"""Alignments from a run's attention, gold alignment sets, and AER (Och & Ney 2003).

AER is computed as Luong et al. (2015, sec. 5.4) do: the model reads the *reference* (forced
decoding), and each target unit links to the source unit it attends to most (argmax of the
attention, the "</s>" row and column left out). The unit is the word (subword attention merged
to whitespace words), or the character for a character-level run such as the dates task, whose
gold alignments link characters. Which gold sets a run is scored on is chosen in golds.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnlab.data import read_lines
from attnlab.errors import DataError
from attnlab.eval import AlignmentSet, aer, aer_counts, alignment_from_attention, read_links
from attnlab.train.progress import progress_bar

from .forced import forced_alignment
from .labels import LabelledAttention
from .loading import TrainedRun

Link = tuple[int, int]  # (source index, target index), 0-based
EOS = "</s>"
RWTH_FILES = ("test.de-en", "deen.talp")


def attention_units(labelled: LabelledAttention, pieces: bool
                    ) -> tuple[np.ndarray | None, list[str], list[str]]:
    """(attention (T, S) or None for a model without attention, the S source units, the T
    target units), at piece level (the characters of a character-level run) or word level;
    "</s>" included."""
    if pieces:
        return labelled.attention, labelled.source_pieces, labelled.target_pieces
    return labelled.word_attention, labelled.source_words, labelled.target_words


def alignment_weights(labelled: LabelledAttention, characters: bool = False) -> np.ndarray:
    """Attention (T, S) over target and source units without "</s>": words, or pieces (the
    characters of a character-level run) when `characters`."""
    weights, sources, targets = attention_units(labelled, characters)
    if weights is None:
        raise DataError("this model has no attention, so it gives no alignments")
    rows = len(targets) - (targets[-1:] == [EOS])
    cols = len(sources) - (sources[-1:] == [EOS])
    return np.asarray(weights)[:rows, :cols]


def argmax_links(labelled: LabelledAttention, characters: bool = False) -> set[Link]:
    """Each target unit linked to its most attended source unit (see alignment_weights)."""
    weights = alignment_weights(labelled, characters)
    return alignment_from_attention(weights) if weights.size else set()


def links_line(links: set[Link]) -> str:
    """Links as a Pharaoh line, "i-j" (source i, target j, 0-based), sorted by target."""
    return " ".join(f"{i}-{j}" for i, j in sorted(links, key=lambda link: (link[1], link[0])))


@dataclass
class GoldSet:
    """Sentence pairs with their gold alignments; links (source, target) 0-based."""

    name: str
    sources: list[str]
    targets: list[str]
    alignments: list[AlignmentSet]

    def __post_init__(self):
        if not len(self.sources) == len(self.targets) == len(self.alignments):
            raise DataError(f"{self.name}: {len(self.sources)} sources, {len(self.targets)} "
                            f"targets and {len(self.alignments)} alignment lines do not match")


def dates_gold_path(src_path: str | os.PathLike) -> Path:
    """Where the dates task keeps the gold links of `{split}.src`: `{split}.align` beside it."""
    path = Path(src_path)
    stem = path.name.removesuffix(".gz").rsplit(".", 1)[0]
    return path.with_name(f"{stem}.align")


def gold_from_file(path: str | os.PathLike, sources: list[str], targets: list[str], *,
                   one_indexed: bool = False, first_lines: bool = False) -> GoldSet:
    """Gold links for the pairs (sources[k], targets[k]) from a Pharaoh file (0-based, or
    1-indexed RWTH/TALP with `one_indexed`). `first_lines`: the pairs are the first lines of
    the file's corpus, so only that many lines of links are used."""
    links = read_links(path, one_indexed=one_indexed)
    return GoldSet(str(path), sources, targets, links[: len(sources)] if first_lines else links)


def rwth_gold(directory: str | os.PathLike, *, reverse: bool = False) -> GoldSet:
    """The RWTH German-English gold set: `test.de-en` ("German ||| English", tokenised) and
    `deen.talp` (1-indexed German-English links). `reverse` makes English the source side."""
    directory = Path(directory)
    text, links = (directory / name for name in RWTH_FILES)
    sources, targets = [], []
    for number, line in enumerate(read_lines(text), start=1):
        parts = line.split(" ||| ")
        if len(parts) != 2:
            raise DataError(f"{text} line {number}: expected 'German ||| English'")
        sources.append(parts[0].strip())
        targets.append(parts[1].strip())
    gold = read_links(links, one_indexed=True)
    if reverse:
        gold = [AlignmentSet(_flip(a.sure), _flip(a.possible)) for a in gold]
        sources, targets = targets, sources
    return GoldSet(f"RWTH de-en gold ({directory})", sources, targets, gold)


def _flip(links: frozenset[Link]) -> frozenset[Link]:
    return frozenset((target, source) for source, target in links)


@dataclass
class AlignmentScore:
    """AER of one way of aligning (a run's forced-decoding attention, or a statistical
    aligner: see aligner.py) on one gold set."""

    name: str
    aer: float
    pairs: int     # sentence pairs scored
    skipped: int   # pairs left out: the model's units did not match the whitespace words
    unit: str      # "words" or "characters"
    method: str = "argmax attention of the forced decoding of the reference"
    # Per pair (|A∩S|, |A∩P|, |A|, |S|) of the attention and of the diagonal aligner on the same
    # pairs, for the significance tests of attnlab compare; left out of to_dict's summaries.
    counts: list[list[int]] | None = field(default=None, repr=False)
    diagonal_counts: list[list[int]] | None = field(default=None, repr=False)

    def format(self) -> str:
        skipped = f" ({self.skipped} skipped: unit count mismatch)" if self.skipped else ""
        return (f"AER {self.aer:.4f}  {self.name}: {self.pairs} pairs{skipped}, {self.unit}, "
                f"{self.method}")


def score_alignments(run: TrainedRun, gold: GoldSet, *, batch_size: int = 64,
                     progress: bool = False) -> AlignmentScore:
    """AER of the argmax attention of forced decoding (see the module docstring); `progress`:
    a bar on a terminal while the pairs are aligned."""
    with progress_bar(len(gold.sources), "aligning", enabled=progress, unit="pair") as bar:
        predicted, kept, shapes = _predicted_links(run, gold, batch_size, bar.update)
    diagonal = [diagonal_links(*shape) for shape in shapes]
    return AlignmentScore(gold.name, aer(predicted, kept), len(kept), len(gold.sources) - len(kept),
                          "characters" if run.character_level else "words",
                          counts=aer_counts(predicted, kept).tolist(),
                          diagonal_counts=aer_counts(diagonal, kept).tolist())


def diagonal_links(targets: int, sources: int) -> set[Link]:
    """The trivial aligner's links for a pair of `targets` x `sources` units: target unit t to
    source unit round(t (S - 1) / (T - 1)), one link per target unit as the argmax has."""
    if not targets or not sources:
        return set()
    scale = (sources - 1) / (targets - 1) if targets > 1 else 0.0
    return {(round(t * scale), t) for t in range(targets)}


def row_shift_aers(run: TrainedRun, gold: GoldSet, shifts=(-1, 0, 1), *,
                   batch_size: int = 64) -> dict[int, float]:
    """AER when target unit t takes the links of attention row t + shift: a check that row t
    is the one that produced unit t. With the rows right, shift 0 gives the lowest AER; an
    off-by-one in how rows are labelled would make shift -1 or +1 win."""
    predicted, kept, _ = _predicted_links(run, gold, batch_size)
    found = {}
    for shift in shifts:
        moved = [{(i, t - shift) for i, t in links if 0 <= t - shift <= _last(links)}
                 for links in predicted]
        found[shift] = aer(moved, kept)
    return found


def _last(links: set[Link]) -> int:
    return max((t for _, t in links), default=-1)


def _predicted_links(run: TrainedRun, gold: GoldSet, batch_size: int,
                     tick: Callable[[int], None] | None = None
                     ) -> tuple[list[set[Link]], list[AlignmentSet], list[tuple[int, int]]]:
    """The argmax links of each pair whose units match the gold's words (or characters), those
    pairs' gold links, and their (target, source) sizes in units."""
    if not run.has_attention:
        raise DataError("this model has no attention, so it gives no alignments to score")
    characters = run.character_level
    forced = forced_alignment(run.model, run.vocabs, gold.sources, gold.targets,
                              batch_size=batch_size, tick=tick)
    predicted, kept, shapes = [], [], []
    for alignment, source, target, links in zip(forced, gold.sources, gold.targets,
                                                gold.alignments, strict=True):
        weights = alignment_weights(alignment, characters)
        units = (len(target), len(source)) if characters else (len(target.split()),
                                                               len(source.split()))
        if weights.shape != units:
            continue  # a normalisation of the vocabulary merged or dropped a unit
        predicted.append(alignment_from_attention(weights) if weights.size else set())
        kept.append(links)
        shapes.append(units)
    if not kept:
        raise DataError(f"{gold.name}: no sentence pair could be aligned unit by unit")
    return predicted, kept, shapes
