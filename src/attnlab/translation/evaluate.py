"""Evaluate a trained run on parallel text: sacreBLEU BLEU and chrF, BLEU by source length,
and AER of its attention on the gold sets it is given (see alignment/from_attention.py for how
AER is computed and alignment/golds.py for choosing the gold sets)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from attnlab.data import read_lines
from attnlab.errors import DataError
from attnlab.eval import (
    DEFAULT_EDGES,
    BucketRow,
    Scores,
    bleu_by_length,
    corpus_scores,
    format_buckets,
)
from attnlab.train.progress import progress_bar

from .alignment import AlignmentScore, GoldSet, score_alignments
from .alignment.golds import within_reach
from .config import DecodeConfig
from .corpus import split_path
from .run_summary import own_metric_is_exact_match

if TYPE_CHECKING:
    from .protocol import TranslatingRun

PER_PAIR = ("counts", "diagonal_counts")   # AlignmentScore's per-pair counts: not summaries


@dataclass
class Evaluation:
    """What `evaluate` finds: scores, BLEU by length, AER per gold set, the outputs, and
    the exact match (percent of outputs equal to their reference) of a run whose own metric
    it is, such as a dates run (None for the others)."""

    scores: Scores
    buckets: list[BucketRow]
    alignments: list[AlignmentScore] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    decode_seconds: float | None = None  # the wall-clock time of translating the sources
    exact_match: float | None = None

    @property
    def speed(self) -> dict | None:
        """Decoding speed: sentences, seconds, sentences per second (None when not timed)."""
        if self.decode_seconds is None:
            return None
        seconds = max(self.decode_seconds, 1e-9)
        return {"sentences": len(self.hypotheses), "seconds": round(self.decode_seconds, 3),
                "sentences_per_second": round(len(self.hypotheses) / seconds, 2)}

    def exact_match_line(self) -> str:
        """'exact match: 99.30% (993 of 1,000 outputs equal their reference)', or ""."""
        if self.exact_match is None:
            return ""
        total = len(self.hypotheses)
        equal = round(self.exact_match * total / 100)
        return (f"exact match: {self.exact_match:.2f}% ({equal:,} of {total:,} outputs equal "
                f"their reference)")

    def format(self) -> str:
        parts = [self.scores.format(), *filter(None, [self.exact_match_line()]),
                 "BLEU by source length (words):", format_buckets(self.buckets)]
        parts.extend(score.format() for score in self.alignments)
        return "\n".join(parts)

    def outputs(self) -> dict[str, Callable[[], str | bytes]]:
        """Its further files by option name: the translations, the BLEU-by-length plot."""
        from .figure import buckets_png

        return {"hypotheses": lambda: "".join(line + "\n" for line in self.hypotheses),
                "bucket_plot": lambda: buckets_png(self.buckets)}

    def timing(self) -> str | None:
        return None if self.decode_seconds is None else self.speed_line()

    def speed_line(self) -> str:
        """'decoded 1,000 sentences in 12.3 s (81.3 sentences/s)', or "" when not timed."""
        speed = self.speed
        if speed is None:
            return ""
        return (f"decoded {speed['sentences']:,} sentences in {speed['seconds']:.1f} s "
                f"({speed['sentences_per_second']:.1f} sentences/s)")

    def to_dict(self) -> dict:
        """JSON-able summary (no hypotheses, no timing: the same run gives the same file); an
        open bucket edge is written as null."""
        buckets = [{**asdict(row), "hi": None if np.isinf(row.hi) else row.hi, "label": row.label}
                   for row in self.buckets]
        alignments = [{key: value for key, value in asdict(score).items()
                       if key not in PER_PAIR} for score in self.alignments]
        record: dict[str, Any] = {"scores": asdict(self.scores), "buckets": buckets,
                                  "alignments": alignments}
        if self.exact_match is not None:
            record["exact_match"] = self.exact_match
        return record


def evaluate_run(run: TranslatingRun, sources: list[str], references: list[str], *,
                 decode: DecodeConfig | None = None, edges: tuple[float, ...] = DEFAULT_EDGES,
                 golds: Sequence[GoldSet] = (), progress: bool = False,
                 replace_unk: bool = False, dictionary: Any = None) -> Evaluation:
    """Translate `sources` with `decode` (the run's settings when None), score against
    `references` (one each), bucket by source length, and compute AER on each gold set;
    `progress`: bars on a terminal while it decodes and aligns; replace_unk, dictionary: as
    TranslationRun.stream's. The decoding is timed (Evaluation.speed)."""
    if len(sources) != len(references):
        raise DataError(f"{len(sources)} source lines but {len(references)} reference lines: "
                        f"they must be parallel")
    started = time.perf_counter()
    with progress_bar(len(sources), "translating", enabled=progress, unit="sentence") as bar:
        hypotheses = [result.text for result in run.stream(
            sources, decode, tick=bar.update, replace_unk=replace_unk, dictionary=dictionary)]
    seconds = time.perf_counter() - started
    scores = corpus_scores(hypotheses, references)
    buckets = bleu_by_length(sources, hypotheses, references, edges)
    # A location-score model addresses only max_len source positions: longer pairs left out
    alignments = [score_alignments(run, within_reach(run, gold), progress=progress)
                  for gold in golds]
    exact = None
    if own_metric_is_exact_match(run.config):
        equal = sum(h == r for h, r in zip(hypotheses, references, strict=True))
        exact = 100.0 * equal / max(len(hypotheses), 1)
    return Evaluation(scores, buckets, alignments, hypotheses, seconds, exact)


def read_pairs(run: TranslatingRun, src: str | os.PathLike | None,
               ref: str | os.PathLike | None) -> tuple[list[str], list[str], Path]:
    """Source and reference lines (plain or .gz), by default the run's test split; returns
    them with the source path (where the dates task's gold `.align` may lie)."""
    if (src is None) != (ref is None):
        raise DataError("give both --src and --ref, or neither (then the run's test split)")
    if src is None:
        data = run.config.data
        src, ref = (split_path(data, data.test, lang) for lang in (data.src_lang, data.tgt_lang))
    assert ref is not None  # given with src, or both the test split's
    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise DataError(f"{src} has {len(sources)} lines but {ref} has {len(references)}: "
                        f"they must be parallel")
    return sources, references, Path(src)
