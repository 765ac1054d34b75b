"""The intervention hook on a Transformer's layers (attnlab.explain.intervene: every head of the
chosen layer's cross-attention) and the faithfulness tests per layer, in float64 on a tiny
random Transformer (2 layers x 2 heads): an intervention on a layer changes the output and is
undone afterwards; uniform weights on a layer are what the loop reference computes for a copy
whose layer was made uniform by hand; stepwise decoding tells the intervention the same steps
as teacher forcing; each layer's tests read that layer. (The default layer of a recurrent
decoder is held to the numbers of before by test_forced.py and test_faithfulness.py.)"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attnlab.data import BOS_ID
from attnlab.explain.faithfulness import erasure_flips, permutation_tvd
from attnlab.explain.forced import ForcedTranslation
from attnlab.explain.intervene import (
    at_steps,
    attention_layers,
    intervening,
    replaced,
    uniform,
)
from attnlab.explain.summary import faithfulness
from attnlab.models import AttentionConfig
from references.transformer import transformer_loop

from .test_attribution_parity import model_of

TRANSFORMER = ("transformer", "transformer", True, AttentionConfig("scaled_dot"))
RNN = ("rnn", "luong", True, AttentionConfig("general"))


def padded_batch():
    """Two sentences of 5 and 3 source words (the second padded), 4 target inputs each."""
    src = torch.tensor([[4, 5, 6, 7, 8], [9, 10, 11, 0, 0]])
    mask = src != 0
    tgt_in = torch.tensor([[BOS_ID, 9, 10, 11], [BOS_ID, 4, 5, 6]])
    return src, mask, tgt_in


def logits_of(model, src, mask, tgt_in):
    with torch.no_grad():
        return model.all_positions(src, mask, tgt_in).logits


@pytest.mark.parametrize("layer", [0, 1])
def test_intervening_on_a_layer_changes_the_output_and_restores_it(layer):
    model = model_of(*TRANSFORMER)
    batch = padded_batch()
    before = logits_of(model, *batch)
    with intervening(model, uniform, layer=layer):
        during = logits_of(model, *batch)
        hooked = [found.intervention is not None for found in attention_layers(model)]
    assert hooked == [index == layer for index in range(2)]   # that layer only
    assert (during - before).abs().max() > 1e-3
    assert torch.equal(logits_of(model, *batch), before)
    assert all(found.intervention is None for found in attention_layers(model))


@pytest.mark.parametrize("layer", [0, 1])
def test_uniform_on_a_layer_is_the_loop_reference_of_that_layer_made_uniform(layer):
    """W_Q = 0, b_Q = 0 in the layer's cross-attention gives every head equal scores, so equal
    weights on every real source position: uniform attention set by hand, then run through
    the float64 loop reference (tests/references/transformer.py)."""
    model = model_of(*TRANSFORMER)
    src, mask, tgt_in = padded_batch()
    by_hand = copy.deepcopy(model)
    crossed = by_hand.decoder.layers[layer].cross_attention
    with torch.no_grad():
        crossed.query_proj.weight.zero_()
        crossed.query_proj.bias.zero_()
    with torch.no_grad():
        expected, weights = transformer_loop(by_hand, src, mask, tgt_in)
    for row, length in enumerate(mask.sum(1).tolist()):   # the hand-made model is uniform
        torch.testing.assert_close(weights[row][layer],
                                   torch.full_like(weights[row][layer], 1 / length))
    with intervening(model, uniform, layer=layer), torch.no_grad():
        out = model.all_positions(src, mask, tgt_in)
    torch.testing.assert_close(out.logits, expected, rtol=0, atol=1e-10)
    for row, length in enumerate(mask.sum(1).tolist()):   # the weights it reports, read
        torch.testing.assert_close(out.heads[row, layer, :, :, :length], weights[row][layer])
        assert out.heads[row, layer, :, :, length:].abs().sum() == 0   # padding: none


def test_stepwise_decoding_tells_the_intervention_the_steps_teacher_forcing_does():
    """An intervention at one step of each row (rows [2, 1]) gives the same logits whether the
    decoder runs the target at once or one position at a time."""
    model = model_of(*TRANSFORMER)
    src, mask, tgt_in = padded_batch()
    new = torch.softmax(torch.randn(2, src.shape[1], generator=torch.Generator().manual_seed(3),
                                    dtype=torch.float64), -1)
    edit = at_steps(torch.tensor([2, 1]), replaced(new * mask))
    with intervening(model, edit, layer=0), torch.no_grad():
        whole = model.all_positions(src, mask, tgt_in).logits
        decoder = model.decoder
        state = decoder.start(model.encode(src, mask))
        stepped = []
        for t in range(tgt_in.shape[1]):
            features, _, state = decoder.run(decoder.embedding(tgt_in[:, t:t + 1]), state)
            stepped.append(decoder.output(features))
    torch.testing.assert_close(torch.cat(stepped, 1), whole, rtol=0, atol=1e-10)
    assert (whole - logits_of(model, src, mask, tgt_in)).abs().max() > 1e-3   # it did edit


def test_a_missing_layer_is_named_in_one_sentence():
    with pytest.raises(ValueError, match=r"no attention layer 2: this model has 2 \(0 to 1\)"):
        with intervening(model_of(*TRANSFORMER), uniform, layer=2):
            pass
    forced = ForcedTranslation.of(model_of(*RNN), [4, 5, 6], [7, 8], layer=1)
    with pytest.raises(ValueError, match="no attention layer 1: this model has one"):
        forced.own()


def test_each_layers_reading_is_that_layers_head_average():
    model = model_of(*TRANSFORMER)
    with torch.no_grad():
        heads = None
        for layer in (0, 1, -1):
            forced = ForcedTranslation.of(model, [4, 5, 6, 7], [8, 9, 10], layer)
            attention, _ = forced.own()
            pair = forced.pair
            heads = model.all_positions(pair.src, pair.src_mask, pair.tgt_in).heads
            torch.testing.assert_close(attention, heads[0, layer].mean(0))
        default = ForcedTranslation.of(model, [4, 5, 6, 7], [8, 9, 10]).own()[0]
        out = model.all_positions(pair.src, pair.src_mask, pair.tgt_in)
    assert torch.equal(default, out.attention[0])   # the last layer: what attnlab reads
    assert heads is not None and (heads[0, 0] - heads[0, 1]).abs().max() > 1e-3


def test_the_faithfulness_tests_run_per_layer_and_the_last_is_the_default():
    model = model_of(*TRANSFORMER)
    pairs = [([4, 5, 6, 7, 8], [9, 10, 11, 4]), ([5, 6, 7], [8, 9])]

    def summary(layer):
        readings = [ForcedTranslation.of(model, s, t, layer) for s, t in pairs]
        return faithfulness(readings, adversarial=1, methods=["gradient"], steps=4).to_dict()

    first, last, default = summary(0), summary(1), summary(-1)
    assert last == default
    assert first["steps"] == last["steps"] == [5, 3]
    assert first["permutation_tvd"] != last["permutation_tvd"]   # each reads its own layer
    assert first["agreement"]["gradient"] != last["agreement"]["gradient"]


def test_erasure_and_permutation_on_a_layer_intervene_on_that_layer():
    """A layer whose output is cut off (W_O = 0, b_O = 0: its cross-attention adds nothing)
    cannot be moved by any intervention on it; the other layer can."""
    model = model_of(*TRANSFORMER)
    crossed = model.decoder.layers[0].cross_attention
    with torch.no_grad():
        crossed.output_proj.weight.zero_()
        crossed.output_proj.bias.zero_()
    generator = torch.Generator().manual_seed(0)
    for layer, moved in ((0, False), (1, True)):
        forced = ForcedTranslation.of(model, [4, 5, 6, 7, 8], [9, 10, 11, 4], layer)
        tvd = permutation_tvd(forced, generator)
        assert (tvd.max() > 1e-6) == moved
        if not moved:
            gradient = forced.attribute("gradient", 1)
            found = erasure_flips(forced, gradient, generator)
            assert sum(found.flips.values()) == 0
            np.testing.assert_allclose(tvd, 0 * tvd, atol=1e-12)   # to rounding: read goes
            #                                                       step by step, own at once
