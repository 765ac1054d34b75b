"""Alignment Error Rate (Och & Ney 2003) and its counts, and the record of one AER score.

`AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)`: A the predicted links, S and P the gold sure and
possible links (P includes S). Each count is summed over the sentence pairs of a corpus, as
Luong et al. (2015, Table 6) report it; `aer_counts` keeps them per pair for the significance
tests of `attnlab compare` (Koehn 2004).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from attnlab.errors import DataError

from .links import AlignmentSet, Link


def aer(predicted: Sequence[Iterable[Link]], gold: Sequence[AlignmentSet]) -> float:
    """Alignment Error Rate over a corpus (Och & Ney 2003; the docs' equations page,
    "Alignments and AER").

    `AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)`, with each count summed over all sentence pairs
    (corpus level, as Luong et al. 2015 Table 6 report it). P includes S (see AlignmentSet), so a
    predicted sure link counts in both intersections. 0 is perfect, 1 is no overlap.
    """
    return aer_from_counts(aer_counts(predicted, gold))


def aer_counts(predicted: Sequence[Iterable[Link]], gold: Sequence[AlignmentSet]) -> np.ndarray:
    """Per sentence pair, the four counts that AER is made of: an int64 array (n, 4) whose row i
    is ``(|A∩S|, |A∩P|, |A|, |S|)`` for pair i (A the predicted links, S and P the gold sure and
    possible links; P includes S, as in `aer`).

    Summing the columns and applying the AER formula gives `aer` exactly (see `aer_from_counts`);
    keeping the rows apart lets a significance test resample sentences (Koehn 2004).
    """
    if len(predicted) != len(gold):
        raise DataError(f"{len(predicted)} predicted alignments but {len(gold)} gold ones.")
    rows = []
    for links, reference in zip(predicted, gold, strict=True):
        links = {(int(s), int(t)) for s, t in links}
        rows.append((len(links & reference.sure), len(links & reference.possible), len(links),
                     len(reference.sure)))
    return np.array(rows, dtype=np.int64).reshape(len(rows), 4)


def aer_from_counts(counts: np.ndarray) -> float:
    """Corpus-level AER from an `aer_counts` array (n, 4): ``1 - (ΣA∩S + ΣA∩P) / (ΣA + ΣS)``,
    the value `aer` gives for the same links. ValueError if the shape is not (n, 4) or the
    denominator is 0 (no predicted links and no sure gold links)."""
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != 4:
        raise ValueError(f"AER counts must be an (n, 4) array, got shape {counts.shape}.")
    hits_sure, hits_possible, size_predicted, size_sure = (int(total) for total in
                                                           counts.sum(axis=0))
    if size_predicted + size_sure == 0:
        raise ValueError("AER is undefined: there are no predicted links and no sure gold links.")
    return 1.0 - (hits_sure + hits_possible) / (size_predicted + size_sure)


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
    # The mean weight a target unit puts on the source's "</s>" (attention's only)
    end_share: float | None = None
    gold: dict[str, str] = field(default_factory=dict)   # the gold set's record (GoldSet.record)

    def format(self) -> str:
        skipped = f" ({self.skipped} skipped: unit count mismatch)" if self.skipped else ""
        end = (f"; {100 * self.end_share:.1f}% of the attention on </s>"
               if self.end_share is not None else "")
        return (f"AER {self.aer:.4f}  {self.name}: {self.pairs} pairs{skipped}, {self.unit}, "
                f"{self.method}{end}")
