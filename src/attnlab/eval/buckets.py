"""BLEU by source sentence length: the analogue of Bahdanau et al. 2015, Fig. 2.

Their figure shows the fixed-length-vector encoder-decoder losing BLEU on long sentences while the
attention model holds up; a table of per-bucket corpus BLEU shows the same effect for any model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnlab.eval.bleu import check_parallel, corpus_bleu

DEFAULT_EDGES = (0, 10, 20, 30, 40, 50, math.inf)
MIN_BUCKET = 10   # sentences: a bucket's BLEU on fewer says little about a model


@dataclass(frozen=True)
class BucketRow:
    """Sentences whose source has lo <= words < hi, and their corpus BLEU (None when empty)."""

    lo: float
    hi: float
    count: int
    bleu: float | None

    @property
    def label(self) -> str:
        """Inclusive word range, e.g. '10-19' or '50+'."""
        if math.isinf(self.hi):
            return f"{self.lo:g}+"
        return f"{self.lo:g}-{self.hi - 1:g}"


def bleu_by_length(
    sources: list[str],
    hypotheses: list[str],
    references: list[str],
    edges: tuple[float, ...] = DEFAULT_EDGES,
) -> list[BucketRow]:
    """Corpus BLEU (sacreBLEU default) within each source-length bucket.

    Source length is the number of whitespace-separated words. Bucket k holds sentences with
    edges[k] <= length < edges[k+1]; the buckets partition the corpus, so the counts add up to
    len(sources). A sentence outside [edges[0], edges[-1]) is an error rather than silently dropped.
    """
    check_parallel(hypotheses, references)
    if len(sources) != len(hypotheses):
        raise ValueError(f"{len(sources)} sources but {len(hypotheses)} hypotheses.")
    if len(edges) < 2 or any(lo >= hi for lo, hi in zip(edges[:-1], edges[1:], strict=True)):
        raise ValueError(f"bucket edges must be two or more strictly increasing numbers: {edges}")
    members: list[list[int]] = [[] for _ in edges[:-1]]
    for index, source in enumerate(sources):
        length = len(source.split())
        bucket = next((k for k in range(len(members)) if edges[k] <= length < edges[k + 1]), None)
        if bucket is None:
            raise ValueError(
                f"source sentence {index} has {length} words, outside the buckets {edges}."
            )
        members[bucket].append(index)
    rows = []
    for k, indices in enumerate(members):
        bleu = None
        if indices:
            hyps = [hypotheses[i] for i in indices]
            refs = [references[i] for i in indices]
            bleu, _ = corpus_bleu(hyps, refs)
        rows.append(BucketRow(lo=edges[k], hi=edges[k + 1], count=len(indices), bleu=bleu))
    return rows


def filled(rows: list[BucketRow]) -> list[BucketRow]:
    """The buckets that hold sentences: an empty one has no BLEU to show."""
    return [row for row in rows if row.count]


def empty_note(rows: list[BucketRow]) -> str:
    """'4 empty buckets left out (20-29, 30-39, 40-49, 50+)', or "" when none is empty."""
    empty = [row.label for row in rows if not row.count]
    if not empty:
        return ""
    buckets = "bucket" if len(empty) == 1 else "buckets"
    return f"{len(empty)} empty {buckets} left out ({', '.join(empty)})"


def format_buckets(rows: list[BucketRow]) -> str:
    """A plain-text table of the buckets that hold sentences (source words, sentence count,
    BLEU), then a line naming the empty ones."""
    lines = [f"{'source words':>12}  {'sentences':>9}  {'BLEU':>6}"]
    for row in filled(rows):
        bleu = "-" if row.bleu is None else f"{row.bleu:6.2f}"
        lines.append(f"{row.label:>12}  {row.count:>9}  {bleu:>6}")
    note = empty_note(rows)
    return "\n".join([*lines, f"  ({note})"] if note else lines)
