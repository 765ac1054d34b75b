"""Attention labelled for people and for alignment: pieces grouped into words, and the piece
attention merged into word attention with `attnlab.eval.merge_subwords`.

The merge is done when `word_attention` is first read, not when a sentence is labelled: plain
translation never reads it, so a very long line costs no more than its piece attention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from attnlab.data import Vocab
from attnlab.data.vocab import WORD_START
from attnlab.eval import merge_subwords


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
