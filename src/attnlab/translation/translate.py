"""Translate plain sentences with beam search (beam 1 = greedy) and label their attention.

Sentences are read in pools, sorted by length inside a pool so a batch holds similar lengths
(little padding), decoded, and handed back in input order; `iter_translate` yields a pool's
results before reading the next, so a long input file never sits in memory whole.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from attnlab.data import collate
from attnlab.decode import Hypothesis, beam_search
from attnlab.models import Seq2Seq
from attnlab.viz.notebook import Displayed, View, translation_view

from .config import DecodeConfig
from .corpus import Vocabularies
from .labels import LabelledAttention, label, sentence_pieces, to_numpy


@dataclass(repr=False)
class TranslationResult(Displayed, LabelledAttention):
    """One translation: text; score (length-normalised) and log_prob of its tokens (target ids,
    EOS last when it finished); plus its pieces, words and attention (see LabelledAttention);
    alternatives: the next best finished hypotheses when decode.n_best > 1, best first (each
    a TranslationResult without alternatives of its own); vocabulary: the source vocabulary's
    kind ("char", "bpe", "unigram", "word"), which names its pieces; member_attention: an
    ensemble's, when asked for, each member's own (T_tgt, S) piece attention (its `attention`
    is their mean), else None. An empty input line gives text "" with no target pieces,
    (0, S) attention arrays and no alternatives.

    In a notebook it draws as the explorer's view (attnlab.viz.notebook), its n-best list
    included; `repr` is a plain table."""

    text: str
    score: float
    log_prob: float
    tokens: list[int]
    alternatives: list[TranslationResult] = field(default_factory=list)
    vocabulary: str = "bpe"
    member_attention: list[np.ndarray | None] | None = None

    @property
    def hypotheses(self) -> list[TranslationResult]:
        """This result and its alternatives: the n-best list, best first."""
        return [self, *self.alternatives]

    @property
    def weights(self) -> np.ndarray | None:
        """The attention its view shows first: (T_tgt, S) over the model's own pieces
        (characters for a character model); word_attention has the words'."""
        return self.attention

    def _view(self) -> View:
        return translation_view(self.hypotheses, self.vocabulary)


def translate(model: Seq2Seq, vocabs: Vocabularies, sentences: list[str],
              decode: DecodeConfig | None = None) -> list[TranslationResult]:
    """Translate `sentences` -> one TranslationResult each, in input order. See iter_translate."""
    return list(iter_translate(model, vocabs, sentences, decode,
                               pool_size=max(len(sentences), 1)))


def iter_translate(model: Seq2Seq, vocabs: Vocabularies, sentences: Iterable[str],
                   decode: DecodeConfig | None = None, *, pool_size: int | None = None,
                   tick: Callable[[int], None] | None = None) -> Iterator[TranslationResult]:
    """Yield a TranslationResult per sentence, in input order, searching with `decode`
    (DecodeConfig's defaults when None: its fields are the only place they are written).

    A sentence of n source pieces (with its EOS) gets at most int(max_len_ratio * n) +
    max_len_extra output pieces. `pool_size` sentences (default 100 batches) are read and
    length-sorted at a time. Empty (blank) lines never reach the model. `tick(n)` is called as
    each batch of n sentences is decoded (a progress bar's update).
    """
    decode = decode or DecodeConfig()
    device = next(model.parameters()).device
    search = _search(model, decode)
    lines = iter(sentences)
    while pool := list(itertools.islice(lines, pool_size or 100 * decode.batch_size)):
        yield from _translate_pool(search, vocabs, pool, decode.batch_size, device,
                                   decode.n_best, tick)


def _search(model: Seq2Seq, decode: DecodeConfig) -> Callable:
    """Beam search with `decode`'s settings: src, src_mask, n_best -> hypotheses."""
    return functools.partial(
        beam_search, model, beam_size=decode.beam, penalty=decode.penalty(),
        max_len=lambda n: int(decode.max_len_ratio * n) + decode.max_len_extra)


def _translate_pool(search: Callable, vocabs: Vocabularies, sentences: list[str],
                    batch_size: int, device, n_best: int = 1,
                    tick: Callable[[int], None] | None = None) -> list[TranslationResult]:
    """Decode one pool in length-sorted batches -> each sentence's result (with its n_best - 1
    alternatives), in the pool's order; tick(n) after each n sentences (blank ones first)."""
    tick = tick or (lambda _: None)
    ids = [vocabs.src.encode(s) if s.strip() else [] for s in sentences]
    results: list[TranslationResult | None] = [None] * len(sentences)
    for index in (i for i, source in enumerate(ids) if not source):
        results[index] = _empty(vocabs)
    order = sorted((i for i, source in enumerate(ids) if source), key=lambda i: len(ids[i]))
    tick(len(sentences) - len(order))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = collate([(ids[i], []) for i in chunk])
        found = search(batch.src.to(device), batch.src_mask.to(device), n_best=n_best)
        for index, hypotheses in zip(chunk, found, strict=True):
            best, *others = (_result(vocabs, sentences[index], h) for h in hypotheses)
            best.alternatives = others   # set, not replace(): that would read (merge) words
            results[index] = best
        tick(len(chunk))
    return [result for result in results if result is not None]


def _result(vocabs: Vocabularies, sentence: str, hypothesis: Hypothesis) -> TranslationResult:
    tokens = hypothesis.tokens
    target_pieces = [vocabs.tgt.id_to_piece(i) for i in tokens]
    attention = None if hypothesis.attention is None else to_numpy(hypothesis.attention)
    labelled = label(vocabs.src, vocabs.tgt, sentence_pieces(vocabs.src, sentence), target_pieces,
                     attention)
    return TranslationResult(**vars(labelled), text=vocabs.tgt.decode(tokens),
                             score=hypothesis.score, log_prob=hypothesis.log_prob, tokens=tokens,
                             vocabulary=_kind(vocabs))


def _empty(vocabs: Vocabularies) -> TranslationResult:
    """The result for a blank line: nothing to translate, so no target and no attention rows."""
    pieces = ["</s>"]  # the source the model would have seen: EOS alone
    labelled = label(vocabs.src, vocabs.tgt, pieces, [], np.zeros((0, len(pieces))))
    return TranslationResult(**vars(labelled), text="", score=0.0, log_prob=0.0, tokens=[],
                             vocabulary=_kind(vocabs))


def _kind(vocabs: Vocabularies) -> str:
    """The source vocabulary's kind: what its pieces are."""
    return str(getattr(vocabs.src, "kind", "bpe"))
