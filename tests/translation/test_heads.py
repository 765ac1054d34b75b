"""Every layer and head of one output (translation/heads.py) on tiny random Transformers: the
last layer's mean over heads is the attention the search returned for the same output, a
choice picks the slice it names, words merge as the attention's do, and a bad choice or a model
without heads is one sentence."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.data.vocab import build_vocab
from attnlab.errors import UserError
from attnlab.translation import translate
from attnlab.translation.config import DecodeConfig
from attnlab.translation.corpus import Vocabularies
from attnlab.translation.heads import (
    HeadChoice,
    checked_choice,
    head_shape,
    headed,
    output_heads,
)
from models.variants import tiny_model

SOURCES = ["14 mars 1998", "2 mai 03", "30 juin 1975"]
TARGETS = ["1998-03-14", "2003-05-02", "1975-06-30"]


def vocabularies() -> Vocabularies:
    return Vocabularies(build_vocab("char", SOURCES, size=None, name="src"),
                        build_vocab("char", TARGETS, size=None, name="tgt"))


def tiny(vocabs: Vocabularies, decoder: str = "transformer", *, layers: int = 2,
         heads: int = 3, seed: int = 0):
    """A random float64 model in eval mode over `vocabs`, d_model 6 (models.variants)."""
    return tiny_model(len(vocabs.src), len(vocabs.tgt), decoder, layers=layers, heads=heads,
                      seed=seed)


@pytest.mark.parametrize("beam", [1, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_last_layer_mean_is_the_searched_attention(beam, seed):
    vocabs = vocabularies()
    model = tiny(vocabs, seed=seed)
    decode = DecodeConfig(beam=beam, n_best=beam, max_len_ratio=1.0, max_len_extra=3)
    for sentence in SOURCES:
        result = translate(model, vocabs, [sentence], decode)[0]
        for hypothesis in result.hypotheses:
            heads = output_heads(model, vocabs, sentence, hypothesis.tokens)
            rows, columns = hypothesis.attention.shape
            assert heads.shape == (2, 3, rows, columns)
            np.testing.assert_allclose(heads[-1].mean(0), hypothesis.attention, atol=1e-5)
            np.testing.assert_allclose(heads.sum(-1), 1.0, atol=1e-9)  # each row a distribution


def test_a_choice_picks_the_slice_it_names():
    heads = np.random.default_rng(0).random((3, 4, 5, 6))
    np.testing.assert_array_equal(HeadChoice().pick(heads), heads[2].mean(0))
    np.testing.assert_array_equal(HeadChoice(1, None).pick(heads), heads[0].mean(0))
    np.testing.assert_array_equal(HeadChoice(2, 4).pick(heads), heads[1, 3])
    assert HeadChoice(None, 2).describe(3) == "layer 3, head 2"
    assert HeadChoice(1).indices(3) == (0, None)


def test_headed_translation_shows_the_choice_at_both_levels():
    vocabs = vocabularies()
    model = tiny(vocabs, layers=2, heads=2, seed=3)
    sentence = SOURCES[0]
    result = translate(model, vocabs, [sentence], DecodeConfig(beam=2, n_best=2))[0]
    shown = headed(model, vocabs, sentence, result, HeadChoice(1, 2))
    assert len(shown.alternatives) == 1 and shown.alternatives[0].heads.shape[:2] == (2, 2)
    np.testing.assert_array_equal(shown.attention, shown.heads[0, 1])
    # merging pieces into words is linear: the words of the chosen head, and of the default
    assert shown.word_heads.shape[2:] == shown.word_attention.shape
    np.testing.assert_allclose(shown.word_heads[0, 1], shown.word_attention)
    np.testing.assert_allclose(shown.word_heads[-1].mean(0), result.word_attention, atol=1e-5)
    other = shown.chosen(2, "mean")
    np.testing.assert_allclose(other.attention, result.attention, atol=1e-5)
    assert other.alternatives[0].choice == HeadChoice(2, None)


def test_out_of_range_and_unreadable_choices_are_one_sentence():
    vocabs = vocabularies()
    model = tiny(vocabs, layers=2, heads=3)
    assert head_shape(model) == (2, 3)
    assert checked_choice(model) == HeadChoice()
    assert checked_choice(model, "2", "mean") == HeadChoice(2, None)
    for layer, head, said in [(3, None, "--layer 3 is out of range: this model has 2 layers, "
                                        "1 to 2"),
                              (None, 0, "--head 0 is out of range: this model has 3 heads, "
                                        "1 to 3"),
                              (None, "first", "--head must be a number or mean, not 'first'")]:
        with pytest.raises(UserError) as error:
            checked_choice(model, layer, head)
        assert str(error.value) == said


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
def test_a_model_without_heads_refuses_a_choice(decoder):
    vocabs = vocabularies()
    model = tiny(vocabs, decoder)
    assert head_shape(model) is None
    assert output_heads(model, vocabs, SOURCES[0], [4, 5]) is None
    with pytest.raises(UserError, match="has no layers or heads"):
        checked_choice(model, 1, None)
    result = translate(model, vocabs, [SOURCES[0]], DecodeConfig(beam=1))[0]
    with pytest.raises(UserError, match="has no layers or heads"):
        headed(model, vocabs, SOURCES[0], result)
