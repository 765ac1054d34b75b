"""Attention labelled for people and for alignment: pieces grouped into words, and the piece
attention merged into word attention with `merge_subwords`.

The merge is done when `word_attention` is first read, not when a sentence is labelled: plain
translation never reads it, so a very long line costs no more than its piece attention."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from attnlab.data import Vocab
from attnlab.data.vocab import WORD_START


@dataclass(frozen=True)
class WordMerge:
    """A merge of piece attention into word attention not done yet: the word index of each
    source piece and of each target piece (see `words`)."""

    source: list[int]
    target: list[int]

    def __call__(self, attention: np.ndarray) -> np.ndarray:
        return merge_subwords(attention, self.source, self.target)


class _MergedWhenRead:
    """The `word_attention` field: holds what the constructor was given, an array, None, or a
    WordMerge, which is done (and kept) the first time the field is read. `vars()` shows the
    stored value, so a label() result passes its pending merge on unmerged."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: LabelledAttention | None,
                owner: type | None = None) -> np.ndarray | None:
        if instance is None:  # no class-level default: the dataclass field stays required
            raise AttributeError(self.name)
        value = instance.__dict__[self.name]
        if isinstance(value, WordMerge):
            # a WordMerge is only given with piece attention (label())
            value = instance.__dict__[self.name] = value(cast(np.ndarray, instance.attention))
        return value

    def __set__(self, instance: object, value: np.ndarray | WordMerge | None) -> None:
        instance.__dict__[self.name] = value


@dataclass
class LabelledAttention:
    """source_pieces / target_pieces as the model saw and wrote them ("</s>" included);
    attention (T_tgt pieces, S pieces) numpy, row j = what produced target piece j, or None for a
    model without attention; source_words / target_words their words ("</s>" a word of its
    own, always last when present); word_attention (T_tgt words, S words): source pieces of a
    word summed, target pieces of a word averaged (rows stay distributions), merged when first
    read if a WordMerge was given."""

    source_pieces: list[str]
    target_pieces: list[str]
    attention: np.ndarray | None
    source_words: list[str]
    target_words: list[str]
    if TYPE_CHECKING:  # for mypy a required field, as dataclass sees it (no class default)
        word_attention: np.ndarray | None
    else:
        word_attention: np.ndarray | None = _MergedWhenRead()


def words(vocab: Vocab, pieces: list[str]) -> tuple[list[str], list[int]]:
    """The words of `pieces` (Vocab.to_words) and each piece's word index, e.g.
    ['▁Fuß', 'ball', '▁spielen', '</s>'] -> ['Fuß', 'spielen', '</s>'], [0, 0, 1, 2]."""
    groups = vocab.to_words(pieces)
    word_of_piece = [0] * len(pieces)
    texts = []
    for word, positions in enumerate(groups):
        for position in positions:
            word_of_piece[position] = word
        text = "".join(pieces[p] for p in positions)
        # sentencepiece marks a word start with "▁"; char vocabularies end a word with a space
        texts.append(text.replace(WORD_START, " ").strip() or text)
    return texts, word_of_piece


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


def label(source_vocab: Vocab, target_vocab: Vocab, source_pieces: list[str],
          target_pieces: list[str], attention: np.ndarray | None) -> LabelledAttention:
    """Group both sides into words; `attention` (T_tgt pieces, S pieces) is merged to words
    when the result's word_attention is first read."""
    source_words, source_ids = words(source_vocab, source_pieces)
    target_words, target_ids = words(target_vocab, target_pieces)
    word_attention = None if attention is None else WordMerge(source_ids, target_ids)
    # the field takes a WordMerge too (_MergedWhenRead); it reads as an array
    return LabelledAttention(source_pieces, target_pieces, attention, source_words,
                             target_words, cast("np.ndarray | None", word_attention))


def sentence_pieces(vocab: Vocab, text: str) -> list[str]:
    """The pieces of `text` as written in it (unknown pieces keep their surface), plus the
    "</s>" that batching appends to a source and that ends a target."""
    return [*vocab.tokenize(text), "</s>"]


def to_numpy(tensor):
    """A tensor as a numpy array on the CPU; half precision becomes float32 (numpy lacks bf16)."""
    if tensor.dtype.is_floating_point and tensor.element_size() < 4:
        tensor = tensor.float()
    return tensor.detach().cpu().numpy()
