"""The faithfulness tests written once over a forced reading (attnlab.explain.forced) give what
the two copies they replace gave (tests/explain/reference_faithfulness.py), number for number,
on a tiny random model of each kind: a translation model's decoder attention and an LSTMN
language model's self-attention, the random draws included."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

from attnlab.explain.forced import ForcedSentence, ForcedTranslation
from attnlab.explain.intervene import attention_layers, replaced
from attnlab.explain.methods import METHODS
from attnlab.explain.randomisation import randomised
from attnlab.explain.summary import faithfulness
from attnlab.lm.faithfulness import faithfulness as lm_faithfulness
from attnlab.models import (
    LSTMN,
    AttentionConfig,
    DecoderConfig,
    EncoderConfig,
    LanguageModel,
    ModelConfig,
    build_model,
)
from models.variants import VARIANTS
from models.variants import translation_model as variant_model

from . import reference_faithfulness as reference

VOCAB = 12
PAIRS = [([4, 5, 6, 7], [5, 6, 7]), ([8, 9], [10, 11, 4, 5]), ([6], [7]),
         ([4, 4, 5, 11, 10, 9], [6, 8])]
SENTENCES = [[4, 5, 6, 7, 8], [9], [10, 11], [4, 4, 5, 6, 9, 10, 11]]


def translation_model(score: str):
    torch.manual_seed(0)
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=6, hidden_dim=4, dropout=0.0),
        decoder=DecoderConfig(kind="luong", embedding_dim=6, hidden_dim=8, dropout=0.0,
                              attention=AttentionConfig(score)))
    model = build_model(config, VOCAB, VOCAB, max_src_len=10).eval()
    with torch.no_grad():   # larger weights: sharper attention, outputs that can flip
        for parameter in model.parameters():
            parameter.mul_(4.0)
    return model


def language_model(layers: int):
    torch.manual_seed(0)
    model = LanguageModel(VOCAB, 5, LSTMN(5, 6, layers=layers), 6).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(10.0)
    return model


def same(found, expected) -> bool:
    """Equal, NaN equal to NaN (a flip rate of no steps); a float to 1e-6 (the measures added
    later are checked against loops that read one step at a time, a pass each: the same sums
    in another order)."""
    if isinstance(found, dict):
        return found.keys() == expected.keys() and all(same(found[k], expected[k])
                                                       for k in found)
    if isinstance(found, list):
        return len(found) == len(expected) and all(map(same, found, expected))
    if isinstance(found, float) and math.isnan(found):
        return isinstance(expected, float) and math.isnan(expected)
    if isinstance(found, float) and isinstance(expected, float):
        return math.isclose(found, expected, rel_tol=1e-6, abs_tol=1e-6)
    return found == expected


@pytest.mark.parametrize("score", ["concat", "general"])
def test_a_translation_summary_is_the_one_the_translation_copy_gave(score):
    model = translation_model(score)
    expected = reference.translation_summary(model, PAIRS, adversarial=1, methods=METHODS,
                                             steps=4, seed=3)
    readings = [ForcedTranslation.of(model, source, target) for source, target in PAIRS]
    found = faithfulness(readings, adversarial=1, methods=METHODS, steps=4, seed=3).to_dict()
    assert list(found) == [*expected, "flip_rates"]      # the record's keys, in order
    assert same({k: v for k, v in found.items() if k != "flip_rates"}, expected)
    assert sum(found["flips"]["top_attention"]) + sum(found["flips"]["random"]) > 0


@pytest.mark.parametrize("layers", [1, 2])
def test_a_language_model_summary_is_the_one_the_self_attention_copy_gave(layers):
    model = language_model(layers)
    expected = reference.lm_summary(model, SENTENCES, seed=5)
    found = lm_faithfulness(model, SENTENCES, seed=5).to_dict()
    assert list(found) == [*expected, "flip_rates"]      # no adversarial_jsd key
    assert same({k: v for k, v in found.items() if k != "flip_rates"}, expected)
    assert found["steps"] == [4, 0, 1, 6] and found["permutation_tvd"][1] is None
    assert sum(found["flips"]["top_attention"]) + sum(found["flips"]["random"]) > 0


def test_a_language_model_record_without_sentences_keeps_its_keys():
    found = lm_faithfulness(language_model(1), []).to_dict()
    assert found["agreement"] == {"gradient": []} and "adversarial_jsd" not in found


def test_each_reading_gives_its_steps_positions_and_distributions():
    pair = ForcedTranslation.of(translation_model("concat"), [4, 5, 6], [7, 8])
    sentence = ForcedSentence.of(language_model(2), [4, 5, 6, 7])
    with torch.no_grad():
        for forced, tested, visible in ((pair, [0, 1, 2], [4, 4, 4]),
                                        (sentence, [2, 3, 4], [2, 3, 4])):
            assert forced.tested().tolist() == tested and forced.visible().tolist() == visible
            attention, probs = forced.own()
            torch.testing.assert_close(probs.sum(-1), torch.ones(len(probs)))
            rows = forced.tested()
            torch.testing.assert_close(forced.read(rows), probs[rows])


def test_a_language_model_is_attributed_by_gradient_only():
    with pytest.raises(ValueError, match="gradient only"):
        ForcedSentence.of(language_model(1), [4, 5]).attribute("erasure", 4)


def test_the_attribution_names_load_no_torch():
    code = "import attnlab.explain.methods, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_explanation_saves_its_panels(tmp_path):
    import numpy as np
    from PIL import Image

    from attnlab.explain.explanation import Explanation

    views = {"attention": np.full((2, 3), 1 / 3), "gradient": np.arange(6.0).reshape(2, 3)}
    found = Explanation("a b", "c", ["a", "b", "</s>"], ["c", "</s>"], views)
    path = found.save_png(tmp_path / "explain.png")
    with Image.open(path) as image:
        assert image.format == "PNG"
    only = found.save_png(tmp_path / "one.png", views=["gradient"])
    with Image.open(path) as both, Image.open(only) as one:
        assert one.width < both.width
    with pytest.raises(ValueError, match="no view 'erasure'"):
        found.save_png(tmp_path / "x.png", views=["erasure"])


ATTENDING = [name for name in VARIANTS if name != "none"]


@pytest.mark.parametrize("name", ATTENDING)
def test_a_read_is_the_full_pass_it_replaces_under_an_edit(name):
    """ForcedTranslation.read runs each step asked once, from the decoder's state before it,
    for the copies that ask for it; with an edit at each copy's own step (of every layer of a
    Transformer), or none, it gives the full pass's distributions, float64, to 1e-10: steps
    repeated and out of order, one copy, the first and the last step alone."""
    model = variant_model(name, dropout=0.0).double().eval()
    generator = torch.Generator().manual_seed(3)
    pair = ForcedTranslation.of(model, [4, 5, 6, 7, 8], [5, 9, 6, 7, 10, 4]).pair
    for layer in range(len(attention_layers(model))):
        forced = ForcedTranslation(model, pair, layer)
        for rows in ([4, 0, 2, 2, 5, 1, 2], [3], [5], [0]):
            rows = torch.tensor(rows)
            new = torch.rand(len(rows), pair.positions, generator=generator, dtype=torch.float64)
            for edit in (replaced(new / new.sum(-1, keepdim=True)), None):
                with torch.no_grad():
                    torch.testing.assert_close(forced.read(rows, edit),
                                               reference.full_pass_read(forced, rows, edit),
                                               rtol=1e-10, atol=1e-10)


def test_a_read_after_the_weights_change_reads_the_new_weights():
    """The states a read continues are made again when the weights change in place (as the
    randomisation check changes them): never the old model's prefix under new weights."""
    model = variant_model("luong-feed-general", dropout=0.0).double().eval()
    forced = ForcedTranslation.of(model, [4, 5, 6, 7], [5, 9, 6, 7])
    rows = torch.tensor([3, 1])
    with torch.no_grad():
        before = forced.read(rows)
        with randomised(model, torch.Generator().manual_seed(0)):
            torch.testing.assert_close(forced.read(rows), reference.full_pass_read(forced, rows),
                                       rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(forced.read(rows), before, rtol=0, atol=0)
