"""Evaluate a trained run: sacreBLEU BLEU and chrF, BLEU by source length, and AER of its
attention against gold word alignments.

AER (Och & Ney 2003) is computed as Luong et al. (2015, sec. 5.4) do: the model reads the
*reference* (forced decoding), and each target unit links to the source unit it attends to most
(argmax of the attention, the "</s>" row and column left out). The unit is the word (subword
attention merged to whitespace words), or the character for a character-level run such as the
dates task, whose gold alignments link characters.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

import attnlab
from attnlab.data import read_lines
from attnlab.errors import DataError
from attnlab.eval import (
    DEFAULT_EDGES,
    AlignmentSet,
    BucketRow,
    Scores,
    aer,
    alignment_from_attention,
    bleu_by_length,
    corpus_scores,
    format_buckets,
    read_pharaoh,
)

from .corpus import split_path
from .forced import forced_alignment
from .labels import LabelledAttention
from .loading import TrainedRun

Link = tuple[int, int]  # (source index, target index), 0-based
EOS = "</s>"
RWTH_NAME = "rwth-deen-gold"
RWTH_FILES = ("test.de-en", "deen.talp")


def alignment_weights(labelled: LabelledAttention, characters: bool = False) -> np.ndarray:
    """Attention (T, S) over target and source units without "</s>": words, or pieces (the
    characters of a character-level run) when `characters`."""
    if characters:
        weights, sources, targets = (labelled.attention, labelled.source_pieces,
                                     labelled.target_pieces)
    else:
        weights, sources, targets = (labelled.word_attention, labelled.source_words,
                                     labelled.target_words)
    if weights is None:
        raise DataError("this model has no attention, so it gives no alignments")
    rows = len(targets) - (targets[-1:] == [EOS])
    cols = len(sources) - (sources[-1:] == [EOS])
    return np.asarray(weights)[:rows, :cols]


def argmax_links(labelled: LabelledAttention, characters: bool = False) -> set[Link]:
    """Each target unit linked to its most attended source unit (see alignment_weights)."""
    weights = alignment_weights(labelled, characters)
    return alignment_from_attention(weights) if weights.size else set()


def pharaoh_line(links: set[Link]) -> str:
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
    links = read_pharaoh(path, one_indexed=one_indexed)
    return GoldSet(str(path), sources, targets, links[: len(sources)] if first_lines else links)


def default_rwth_dir() -> Path:
    """$ATTNLAB_DATA/rwth-deen-gold; ATTNLAB_DATA defaults to <repository>/../shared/data."""
    repository = Path(attnlab.__file__).resolve().parents[2]
    root = os.environ.get("ATTNLAB_DATA", repository.parent / "shared" / "data")
    return Path(root) / RWTH_NAME


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
    gold = read_pharaoh(links, one_indexed=True)
    if reverse:
        gold = [AlignmentSet(_flip(a.sure), _flip(a.possible)) for a in gold]
        sources, targets = targets, sources
    return GoldSet(f"RWTH de-en gold ({directory})", sources, targets, gold)


def choose_golds(run: TrainedRun, sources: list[str], references: list[str], *,
                 src_path: str | os.PathLike | None = None,
                 gold_file: str | os.PathLike | None = None, one_indexed: bool = False,
                 rwth: str | os.PathLike | None = None, use_rwth: bool = True,
                 first_lines: bool = False) -> list[GoldSet]:
    """The gold sets to compute AER on: `gold_file` for the evaluated pairs if given, else the
    dates task's `.align` beside `src_path` when there is one; and the RWTH set (`rwth`, or
    default_rwth_dir() for a German-English run when it exists) unless `use_rwth` is False.
    `first_lines`: the pairs are the first lines of src_path's corpus (see gold_from_file)."""
    golds = []
    automatic = run.has_attention  # a model without attention gets AER only when asked for
    if gold_file is not None:
        golds.append(gold_from_file(gold_file, sources, references, one_indexed=one_indexed,
                                    first_lines=first_lines))
    elif automatic and src_path is not None and dates_gold_path(src_path).is_file():
        gold = gold_from_file(dates_gold_path(src_path), sources, references,
                              first_lines=first_lines)
        golds.append(replace(gold, name=f"dates task gold {gold.name}"))
    languages = (run.config.data.src_lang, run.config.data.tgt_lang)
    directory = Path(rwth) if rwth is not None else default_rwth_dir()
    german_english = languages in (("de", "en"), ("en", "de"))
    if use_rwth and (rwth is not None or (automatic and german_english and directory.is_dir())):
        golds.append(rwth_gold(directory, reverse=languages == ("en", "de")))
    return golds


def _flip(links: frozenset[Link]) -> frozenset[Link]:
    return frozenset((target, source) for source, target in links)


@dataclass
class AlignmentScore:
    """AER of a run's forced-decoding attention on one gold set."""

    name: str
    aer: float
    pairs: int     # sentence pairs scored
    skipped: int   # pairs left out: the model's units did not match the whitespace words
    unit: str      # "words" or "characters"

    def format(self) -> str:
        skipped = f" ({self.skipped} skipped: unit count mismatch)" if self.skipped else ""
        return (f"AER {self.aer:.4f}  {self.name}: {self.pairs} pairs{skipped}, {self.unit}, "
                f"argmax attention of the forced decoding of the reference")


def score_alignments(run: TrainedRun, gold: GoldSet, *, batch_size: int = 64) -> AlignmentScore:
    """AER of the argmax attention of forced decoding (see the module docstring)."""
    if not run.has_attention:
        raise DataError("this model has no attention, so it gives no alignments to score")
    characters = run.character_level
    forced = forced_alignment(run.model, run.vocabs, gold.sources, gold.targets,
                              batch_size=batch_size)
    predicted, kept = [], []
    for alignment, source, target, links in zip(forced, gold.sources, gold.targets,
                                                gold.alignments, strict=True):
        weights = alignment_weights(alignment, characters)
        units = (len(target), len(source)) if characters else (len(target.split()),
                                                               len(source.split()))
        if weights.shape != units:
            continue  # a normalisation of the vocabulary merged or dropped a unit
        predicted.append(alignment_from_attention(weights) if weights.size else set())
        kept.append(links)
    if not kept:
        raise DataError(f"{gold.name}: no sentence pair could be aligned unit by unit")
    return AlignmentScore(gold.name, aer(predicted, kept), len(kept), len(gold.sources) - len(kept),
                          "characters" if characters else "words")


@dataclass
class Evaluation:
    """What `evaluate` finds: scores, BLEU by length, AER per gold set, and the outputs."""

    scores: Scores
    buckets: list[BucketRow]
    alignments: list[AlignmentScore] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)

    def format(self) -> str:
        parts = [self.scores.format(), "BLEU by source length (words):",
                 format_buckets(self.buckets)]
        parts.extend(score.format() for score in self.alignments)
        return "\n".join(parts)

    def to_dict(self) -> dict:
        """JSON-able summary (no hypotheses); an open bucket edge is written as null."""
        buckets = [{**asdict(row), "hi": None if np.isinf(row.hi) else row.hi, "label": row.label}
                   for row in self.buckets]
        return {"scores": asdict(self.scores), "buckets": buckets,
                "alignments": [asdict(score) for score in self.alignments]}


def evaluate_run(run: TrainedRun, sources: list[str], references: list[str], *,
                 beam: int | None = None, alpha: float | None = None,
                 edges: tuple[float, ...] = DEFAULT_EDGES,
                 golds: list[GoldSet] = ()) -> Evaluation:
    """Translate `sources`, score against `references` (one each), bucket by source length,
    and compute AER on each gold set."""
    if len(sources) != len(references):
        raise DataError(f"{len(sources)} source lines but {len(references)} reference lines: "
                        f"they must be parallel")
    hypotheses = [result.text for result in run.translate(sources, beam=beam, alpha=alpha)]
    scores = corpus_scores(hypotheses, references)
    buckets = bleu_by_length(sources, hypotheses, references, edges)
    alignments = [score_alignments(run, gold) for gold in golds]
    return Evaluation(scores, buckets, alignments, hypotheses)


def read_pairs(run: TrainedRun, src: str | os.PathLike | None,
               ref: str | os.PathLike | None) -> tuple[list[str], list[str], Path]:
    """Source and reference lines (plain or .gz), by default the run's test split; returns
    them with the source path (where the dates task's gold `.align` may lie)."""
    if (src is None) != (ref is None):
        raise DataError("give both --src and --ref, or neither (then the run's test split)")
    if src is None:
        data = run.config.data
        src, ref = (split_path(data, data.test, lang) for lang in (data.src_lang, data.tgt_lang))
    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise DataError(f"{src} has {len(sources)} lines but {ref} has {len(references)}: "
                        f"they must be parallel")
    return sources, references, Path(src)
