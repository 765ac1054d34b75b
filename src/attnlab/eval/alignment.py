"""Word alignments: reading gold links, turning attention into links, and Alignment Error Rate.

Orientation everywhere: a link is (source index, target index), 0-based. For the RWTH de-en gold
set, German is the source, so its 1-indexed ``i-j`` (German i, English j) becomes (i-1, j-1).
Attention matrices are (T_tgt, T_src), as the models return them: row j is target word j's
distribution over source words.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlab.errors import DataError

Link = tuple[int, int]  # (source index, target index), 0-based

# "i-j" is a sure link, "ipj" a possible one (the Pharaoh/TALP convention of the RWTH set).
LINK_PATTERN = re.compile(r"(\d+)([-p])(\d+)")


@dataclass(frozen=True)
class AlignmentSet:
    """Gold links of one sentence pair: sure links S and possible links P.

    Convention (Och & Ney 2003): P includes S, so ``possible`` always holds every sure link
    too; a link written as possible only is in ``possible`` and not in ``sure``.
    """

    sure: frozenset[Link]
    possible: frozenset[Link]

    def __post_init__(self):
        # Normalise so callers may pass plain sets and need not repeat sure links in possible.
        object.__setattr__(self, "sure", frozenset(self.sure))
        object.__setattr__(self, "possible", frozenset(self.possible) | self.sure)


def _parse_line(line: str, one_indexed: bool, where: str) -> AlignmentSet:
    sure: set[Link] = set()
    possible: set[Link] = set()
    for token in line.split():
        match = LINK_PATTERN.fullmatch(token)
        if match is None:
            raise DataError(
                f"{where}: cannot read {token!r} as a link; expected 'i-j' (sure) or 'ipj' "
                "(possible) with whole numbers."
            )
        source, target = int(match.group(1)), int(match.group(3))
        if one_indexed:
            if source == 0 or target == 0:
                raise DataError(f"{where}: link {token!r} has index 0, but the file is 1-indexed.")
            source, target = source - 1, target - 1
        (sure if match.group(2) == "-" else possible).add((source, target))
    return AlignmentSet(sure=frozenset(sure), possible=frozenset(possible))


def read_links(
    path_or_lines: str | os.PathLike | Iterable[str], one_indexed: bool = False
) -> list[AlignmentSet]:
    """Read one AlignmentSet per line of Pharaoh-format links (``i-j`` sure, ``ipj`` possible).

    path_or_lines: a file path, or an iterable of lines (then errors say '<lines>').
    one_indexed: True for files counting words from 1 (RWTH/TALP gold); links are returned 0-based.
    An empty line is a sentence pair with no links. Bad input raises DataError naming file and line.
    """
    if isinstance(path_or_lines, (str, os.PathLike)):
        path = Path(path_or_lines)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise DataError(f"cannot read alignment file {path}: {error}.") from error
        name = str(path)
    else:
        lines, name = list(path_or_lines), "<lines>"
    return [
        _parse_line(line, one_indexed, f"{name} line {number}")
        for number, line in enumerate(lines, start=1)
    ]


def aer(predicted: Sequence[Iterable[Link]], gold: Sequence[AlignmentSet]) -> float:
    """Alignment Error Rate over a corpus (Och & Ney 2003; the docs' equations page,
    "Alignments and AER").

    `AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)`, with each count summed over all sentence pairs
    (corpus level, as Luong et al. 2015 Table 6 report it). P includes S (see AlignmentSet), so a
    predicted sure link counts in both intersections. 0 is perfect, 1 is no overlap.
    """
    if len(predicted) != len(gold):
        raise DataError(f"{len(predicted)} predicted alignments but {len(gold)} gold ones.")
    hits_sure = hits_possible = size_predicted = size_sure = 0
    for links, reference in zip(predicted, gold, strict=True):
        links = {(int(s), int(t)) for s, t in links}
        hits_sure += len(links & reference.sure)
        hits_possible += len(links & reference.possible)
        size_predicted += len(links)
        size_sure += len(reference.sure)
    if size_predicted + size_sure == 0:
        raise ValueError("AER is undefined: there are no predicted links and no sure gold links.")
    return 1.0 - (hits_sure + hits_possible) / (size_predicted + size_sure)



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


def alignment_from_attention(
    weights: np.ndarray, mode: str = "argmax", threshold: float = 0.5
) -> set[Link]:
    """Hard links from soft attention weights (T_tgt, T_src); returns {(source i, target j)}.

    mode "argmax": each target word links to its most-attended source word (as in Luong et al.
    2015, sec. 5.4). mode "threshold": every pair with weight >= threshold. A row with no
    weight (a padded target position) links to nothing. Trim rows/columns of tokens that the gold
    alignment lacks, such as <eos>, before calling.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must be a (T_tgt, T_src) matrix, got shape {weights.shape}.")
    if mode == "argmax":
        live = weights.sum(axis=1) > 0
        best = weights.argmax(axis=1)  # (T_tgt,)
        return {(int(best[j]), j) for j in range(weights.shape[0]) if live[j]}
    if mode == "threshold":
        targets, sources = np.nonzero(weights >= threshold)
        return {(int(i), int(j)) for j, i in zip(targets, sources, strict=True)}
    raise ValueError(f"unknown alignment mode {mode!r}; options: ['argmax', 'threshold']")


def _word_index(word_of_piece: Sequence[int], pieces: int, side: str) -> tuple[np.ndarray, int]:
    """The word index of each piece as an array (pieces,), and the number of words; ValueError
    unless the indices cover 0..words-1 with no gap."""
    ids = np.asarray(word_of_piece, dtype=np.int64)
    if ids.shape != (pieces,):
        raise ValueError(f"{side} has {pieces} pieces in weights but {len(ids)} word indices.")
    if not pieces:
        return ids, 0
    words = int(ids.max()) + 1
    if ids.min() < 0 or not np.bincount(ids, minlength=words).all():
        raise ValueError(
            f"{side} word indices must cover 0..{words - 1} with no gap: {ids.tolist()}"
        )
    return ids, words


def _sum_groups(matrix: np.ndarray, ids: np.ndarray, groups: int, axis: int) -> np.ndarray:
    """Sum the slices of `matrix` along `axis` that share an id in `ids` (every id in
    0..groups-1 occurs): the size along `axis` becomes `groups`. Index arithmetic only, so the
    cost is one pass over `matrix`, never a (pieces, words) one-hot matrix."""
    if groups == 0:
        return np.zeros(matrix.shape[:axis] + (0,) + matrix.shape[axis + 1 :])
    order = np.argsort(ids, kind="stable")  # pieces of a word next to each other
    starts = np.searchsorted(ids[order], np.arange(groups))  # (groups,) first piece of each
    if not np.array_equal(order, np.arange(len(ids))):  # words out of order: gather first
        matrix = np.take(matrix, order, axis=axis)
    return np.add.reduceat(matrix, starts, axis=axis)


def merge_subwords(
    weights: np.ndarray, src_word_of_piece: Sequence[int], tgt_word_of_piece: Sequence[int]
) -> np.ndarray:
    """Subword attention (T_tgt_pieces, T_src_pieces) -> word attention (T_tgt_words, T_src_words).

    src_word_of_piece[p] is the word index of source piece p (likewise for the target).
    Source pieces of one word: their weights are summed, since the word received that much mass.
    Target pieces of one word: their rows are averaged, so a word's row stays a distribution
    (a row that summed to 1 still sums to 1) whatever the number of pieces.
    Time and memory are linear in the size of `weights`.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must be a (T_tgt, T_src) matrix, got shape {weights.shape}.")
    source, source_words = _word_index(src_word_of_piece, weights.shape[1], "source")
    target, target_words = _word_index(tgt_word_of_piece, weights.shape[0], "target")
    by_source_word = _sum_groups(weights, source, source_words, axis=1)  # (Pt, Ws)
    summed = _sum_groups(by_source_word, target, target_words, axis=0)  # (Wt, Ws)
    pieces_per_word = np.bincount(target, minlength=target_words)  # (Wt,)
    return summed / pieces_per_word[:, None]  # average over a target word's pieces


def word_ids_from_pieces(pieces: Sequence[str], word_start: str = "\u2581") -> list[int]:
    """Word index of each SentencePiece piece: a piece starting with '▁' begins a new word.

    E.g. ['▁Fuß', 'ball', '▁spielen'] -> [0, 0, 1]. A first piece without '▁' still starts word 0.
    """
    ids, word = [], -1
    for position, piece in enumerate(pieces):
        if position == 0 or piece.startswith(word_start):
            word += 1
        ids.append(word)
    return ids
