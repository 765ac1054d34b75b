"""Every layer and head of a Transformer's cross-attention for one output, and the choice of
one of them (or of a layer's mean over heads) that the plot, the explorer and the notebook
views draw.

The heads of any output come from ONE teacher-forced pass of the model over (source, that
output) in eval mode: the Transformer's cached search steps compute exactly what teacher
forcing computes (tests/models/test_transformer.py), so the search itself keeps only the
(T, S) attention attnlab reads, the last layer's mean over heads (models/transformer.py).

    heads = output_heads(run.model, run.vocabs, "3 March 1999", result.tokens)  # (L, H, T, S)
    HeadChoice(layer=2, head=None).pick(heads)          # layer 2's mean over heads, (T, S)
    headed(run, sentence, result, checked_choice(run.model, 2, 1))   # a TranslationResult
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

import numpy as np
import torch

from attnlab.data.vocab import BOS_ID, EOS_ID
from attnlab.decode import evaluating
from attnlab.errors import UserError
from attnlab.models import MultiHeadAttention, Seq2Seq
from attnlab.viz import heads_grid_figure
from attnlab.viz.notebook import View, translation_view

from .corpus import Vocabularies
from .labels import WordMerge, to_numpy, words
from .translate import TranslationResult

MEAN = "mean"  # the head that stands for a layer's mean over its heads
NO_HEADS = ("a layer and head are chosen from a Transformer's cross-attention, and this "
            "model's attention has no layers or heads (one set of weights per step)")


def _forced_heads(model: Seq2Seq, source_ids: Sequence[int],
                  target_in: Sequence[int]) -> torch.Tensor | None:
    """One teacher-forced pass: the cross-attention of every layer and head (L, H, T, S) of
    target_in (T ids, BOS first) over source_ids + EOS, or None for a model without heads."""
    device = next(model.parameters()).device
    src = torch.tensor([[*source_ids, EOS_ID]], device=device)  # (1, S), as collate makes it
    with evaluating(model):
        out = model.all_positions(src, torch.ones_like(src, dtype=torch.bool),
                                  torch.tensor([list(target_in)], device=device))
    return None if out.heads is None else out.heads[0]


def head_shape(model: Seq2Seq) -> tuple[int, int] | None:
    """(layers, heads) of the model's cross-attention, asked of its decoder's attention layers;
    None when they are no multi-head layers (a recurrent decoder) or there is no one decoder
    (an ensemble)."""
    decoder = getattr(model, "decoder", None)
    layers = [] if decoder is None else decoder.attention_layers()
    if not layers or not all(isinstance(layer, MultiHeadAttention) for layer in layers):
        return None
    return len(layers), cast(MultiHeadAttention, layers[0]).heads


def output_heads(model: Seq2Seq, vocabs: Vocabularies, source: str,
                 output_ids: Sequence[int]) -> np.ndarray | None:
    """The cross-attention of every layer and head that produced `output_ids` (a hypothesis'
    tokens: EOS last when it finished) from `source`: (L, H, T, S), T = len(output_ids), S the
    source pieces with EOS; None for a model without heads."""
    target_in = [BOS_ID, *output_ids[:-1]]  # step t reads the tokens before it
    heads = _forced_heads(model, vocabs.src.encode(source), target_in)
    if heads is None:
        return None
    return to_numpy(heads[:, :, : len(output_ids)]).astype(np.float64)


@dataclass(frozen=True)
class HeadChoice:
    """One layer's head, or its mean over heads, counted from 1 as users count; layer None is
    the last layer, head None the mean: the default is what attnlab reads everywhere."""

    layer: int | None = None
    head: int | None = None

    def pick(self, heads: np.ndarray) -> np.ndarray:
        """heads (L, H, T, S) -> the chosen weights (T, S)."""
        layer = heads[-1 if self.layer is None else self.layer - 1]  # (H, T, S)
        return layer.mean(0) if self.head is None else layer[self.head - 1]

    def indices(self, layers: int) -> tuple[int, int | None]:
        """(layer index from 0, head index from 0 or None for the mean), for the views."""
        layer = layers if self.layer is None else self.layer
        return layer - 1, None if self.head is None else self.head - 1

    def describe(self, layers: int) -> str:
        """"layer 3, head 2" or "layer 3, mean of its heads"."""
        layer = layers if self.layer is None else self.layer
        return f"layer {layer}, " + ("mean of its heads" if self.head is None
                                     else f"head {self.head}")


def _whole(value: int | str | None, name: str) -> int | None:
    """A layer or head as given (an int, a numeral, "mean" for a head), or None."""
    if value is None or (name == "head" and value == MEAN):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        expected = "a number or mean" if name == "head" else "a number"
        raise UserError(f"--{name} must be {expected}, not {value!r}") from None


def checked_choice(model: Seq2Seq, layer: int | str | None = None,
                   head: int | str | None = None) -> HeadChoice:
    """The choice of layer and head (from 1; head "mean": the layer's mean over heads), checked
    against the model: one sentence naming the valid range, or saying that the model has no
    layers and heads to choose (only a Transformer's cross-attention has)."""
    if layer is None and head is None:
        return HeadChoice()
    shape = head_shape(model)
    if shape is None:
        raise UserError(NO_HEADS)
    return _checked_against(*shape, layer, head)


@dataclass(repr=False)
class HeadedTranslation(TranslationResult):
    """A translation with every layer and head of its cross-attention: heads (L, H, T, S) over
    its pieces, `attention` (and word_attention, its words') the chosen layer and head's, so
    every reader of a TranslationResult reads the choice; alternatives headed alike. In a
    notebook its view offers the layer and head (the choice first); `.grid()` draws every
    layer x head."""

    heads: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0, 0)))
    choice: HeadChoice = HeadChoice()
    merge: WordMerge = WordMerge([], [])  # its pieces' word indices (labels.words)

    @property
    def headed_hypotheses(self) -> list[HeadedTranslation]:
        """This result and its alternatives (headed alike): the n-best list, best first."""
        return [self, *cast(list[HeadedTranslation], self.alternatives)]

    @property
    def word_heads(self) -> np.ndarray:
        """heads merged to words as word_attention is: (L, H, T words, S words)."""
        merge = self.merge
        if not self.heads.shape[2]:  # no target rows: nothing to merge
            return np.zeros((*self.heads.shape[:2], 0, len(self.source_words)))
        return np.array([[merge(matrix) for matrix in layer] for layer in self.heads])

    def chosen(self, layer: int | str | None = None,
               head: int | str | None = None) -> HeadedTranslation:
        """The same translation with another layer and head chosen (checked as plot checks)."""
        layers, count = self.heads.shape[:2]
        choice = _checked_against(layers, count, layer, head)
        return _with_choice(self, self.heads, choice, self.merge,
                            [_with_choice(a, a.heads, choice, a.merge, [])
                             for a in self.headed_hypotheses[1:]])

    def grid(self, pieces: bool | None = None) -> Any:
        """Every layer x head (and each layer's mean) of this translation, a matplotlib
        figure; pieces None: the model's own pieces for a character vocabulary, else words."""
        use_pieces = self.vocabulary == "char" if pieces is None else pieces
        heads = self.heads if use_pieces else self.word_heads
        source = self.source_pieces if use_pieces else self.source_words
        target = self.target_pieces if use_pieces else self.target_words
        said = " ".join(word for word in self.source_words if word != "</s>")
        return heads_grid_figure(heads, source, target, title=f"{said}\n-> {self.text}",
                                 units="characters" if use_pieces and self.vocabulary == "char"
                                 else "pieces" if use_pieces else "words")

    def _view(self) -> View:
        heads = [{"piece": h.heads, "word": h.word_heads} for h in self.headed_hypotheses]
        return translation_view(self.hypotheses, self.vocabulary, heads=heads,
                                choice=self.choice.indices(self.heads.shape[0]))


def _checked_against(layers: int, count: int, layer: int | str | None,
                     head: int | str | None) -> HeadChoice:
    choice = HeadChoice(_whole(layer, "layer"), _whole(head, "head"))
    for number, limit, name in ((choice.layer, layers, "layer"), (choice.head, count, "head")):
        if number is not None and not 1 <= number <= limit:
            raise UserError(f"--{name} {number} is out of range: this model has {limit} "
                            f"{name}s, 1 to {limit}")
    return choice


def _with_choice(result: TranslationResult, heads: np.ndarray, choice: HeadChoice,
                 merge: WordMerge, alternatives: list[TranslationResult]
                 ) -> HeadedTranslation:
    """`result` carrying `heads`, its attention the chosen weights."""
    kept = {f.name: vars(result)[f.name] for f in fields(TranslationResult)
            if f.name not in ("attention", "word_attention", "alternatives")}
    chosen = choice.pick(heads) if heads.shape[0] else result.attention
    # the field takes a WordMerge too (labels._MergedWhenRead); it reads as an array
    return HeadedTranslation(**kept, attention=chosen,
                             word_attention=cast("np.ndarray | None", merge),
                             alternatives=alternatives, heads=heads, choice=choice, merge=merge)


def headed(model: Seq2Seq, vocabs: Vocabularies, sentence: str, result: TranslationResult,
           choice: HeadChoice = HeadChoice()) -> HeadedTranslation:
    """`result` (a translation of `sentence` by `model`) and its alternatives with their heads
    (one teacher-forced pass each), showing `choice`. UserError for a model without heads."""
    headed_ones = []
    for hypothesis in result.hypotheses:
        heads = output_heads(model, vocabs, sentence, hypothesis.tokens)
        if heads is None:
            raise UserError(NO_HEADS)
        headed_ones.append(_with_choice(hypothesis, heads, choice,
                                        _word_merge(vocabs, hypothesis), []))
    best, *others = headed_ones
    best.alternatives = list(others)  # set, not replace(): that would read (merge) words
    return best


def _word_merge(vocabs: Vocabularies, result: TranslationResult) -> WordMerge:
    """How the result's pieces merge into its words (as labels.label merges them)."""
    return WordMerge(words(vocabs.src, result.source_pieces)[1],
                     words(vocabs.tgt, result.target_pieces)[1])


def level_heads(result: HeadedTranslation, level: str) -> list:
    """Its heads at `level` ("word": merged to words; "piece": its own pieces) as nested
    lists (L, H, T, S), for the explorer's JSON."""
    heads = result.word_heads if level == "word" else result.heads
    return np.round(heads, 5).tolist()
