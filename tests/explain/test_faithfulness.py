"""The faithfulness tests on hand-built models whose answer is known.

Both models attend only to source position 0 (a location score with all its weight there). In
the faithful one the output is read from that context alone, and every encoder state depends
on its own token alone (no recurrence), so the output depends on source token 0 and nothing
else. In the unfaithful one the output ignores the context: attention points at position 0 and
explains nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.explain.attribution import attribute
from attnlab.explain.faithfulness import (
    adversarial_jsd,
    agreement,
    erasure_flips,
    jsd,
    permutation_tvd,
)
from attnlab.explain.forced import ForcedTranslation
from attnlab.explain.intervene import at_steps, intervening, uniform
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model

VOCAB, HIDDEN = 12, 8


def hand_built(faithful: bool):
    torch.manual_seed(3)
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=6, hidden_dim=HIDDEN // 2, dropout=0.0),
        decoder=DecoderConfig(kind="luong", embedding_dim=6, hidden_dim=HIDDEN, dropout=0.0,
                              attention=AttentionConfig("location", max_len=10)))
    model = build_model(config, VOCAB, VOCAB, max_src_len=10).double().eval()
    with torch.no_grad():
        for rnn, constant in ((model.encoder.rnn, False), (model.decoder.rnn, True)):
            size = rnn.hidden_size
            for name, parameter in rnn.named_parameters():
                if name.startswith("weight_hh") or (constant and name.startswith("weight_ih")):
                    parameter.zero_()              # no recurrence (decoder: no input either)
                if name.startswith("bias_ih"):
                    parameter[size : 2 * size] = -40.0        # GRU gate z ~ 0: h_t = n_t
                    if constant:
                        parameter[2 * size :] = 2.0           # the decoder's h_t: constant
        weights = model.decoder.attention.mechanism.score.position_logits.weight  # (10, H)
        weights.zero_()
        weights[0] = 10.0                                   # all the weight on position 0
        combine = model.decoder.combine.weight              # W_c over [context; h]
        keys = combine.shape[1] - HIDDEN
        if faithful:
            combine[:, keys:] = 0.0                         # h~ reads the context only
            model.decoder.output.proj.weight.mul_(30.0)     # a confident output
        else:
            combine[:, :keys] = 0.0                         # h~ ignores the context
    return model


def pair_with_distinct_first(model) -> ForcedTranslation:
    """A source whose token 0 gives another output than its other tokens would."""
    for first in range(4, VOCAB):
        for rest in range(4, VOCAB):
            pair = ForcedTranslation.of(model, [first, rest, rest, rest], [5, 6, 7])
            other = ForcedTranslation.of(model, [rest, rest, rest, rest], [5, 6, 7])
            with torch.no_grad():
                mine, theirs = pair.own()[1], other.own()[1]
            if bool((mine.argmax(-1) != theirs.argmax(-1)).all()):
                return pair
    raise AssertionError("no source with a distinct token 0")


@pytest.fixture(scope="module")
def faithful():
    return pair_with_distinct_first(hand_built(True))


@pytest.fixture(scope="module")
def unfaithful():
    return ForcedTranslation.of(hand_built(False), [4, 5, 6, 7], [5, 6, 7])


def test_the_hand_built_models_attend_to_position_0(faithful, unfaithful):
    for forced in (faithful, unfaithful):
        attention, _ = forced.own()
        assert (attention[:, 0] > 1 - 1e-9).all()


def test_attributions_find_the_one_position_that_matters(faithful):
    for method in ("gradient", "integrated_gradients", "erasure"):
        values = np.abs(attribute(faithful.model, faithful.pair, method))
        assert (values[:, 0] > 1e-6).all(), method
        assert values[:, 1:].max() < 1e-9, method   # tokens 1.. and EOS change nothing


def test_erasure_flips_only_the_attended_position_of_a_faithful_model(faithful):
    flips = erasure_flips(faithful, faithful.attribute("gradient", 1),
                          torch.Generator().manual_seed(0))
    assert flips.steps == faithful.pair.steps
    assert flips.top_attention == flips.steps       # the output needs position 0
    assert flips.top_gradient == flips.steps        # gradient ranks position 0 first
    assert flips.random == 0                        # the others had no weight to lose


def test_erasure_flips_nothing_when_the_output_ignores_attention(unfaithful):
    flips = erasure_flips(unfaithful, unfaithful.attribute("gradient", 1),
                          torch.Generator().manual_seed(0))
    assert (flips.top_attention, flips.random, flips.top_gradient) == (0, 0, 0)


def test_permutation_moves_a_faithful_output_and_not_an_unfaithful_one(faithful, unfaithful):
    moved = permutation_tvd(faithful, torch.Generator().manual_seed(0))
    still = permutation_tvd(unfaithful, torch.Generator().manual_seed(0))
    assert moved.min() > 0.1                        # position 0 moves in most shuffles
    assert still.max() < 1e-12


def test_adversarial_attention_goes_far_only_when_the_output_ignores_it(faithful, unfaithful):
    far = adversarial_jsd(unfaithful, iterations=40)
    near = adversarial_jsd(faithful, iterations=40)
    assert far.min() > 0.9                          # JSD in bits: 1 is as far as it goes
    assert near.max() < far.min() - 0.5


def test_uniform_attention_costs_only_a_faithful_model(faithful, unfaithful):
    for forced, changes in ((faithful, True), (unfaithful, False)):
        before = forced.own()[1]
        with intervening(forced.model, uniform):
            after = forced.own()[1]
        moved = 0.5 * (after - before).abs().sum(-1)
        assert bool((moved > 0.01).any()) == changes


def test_an_intervention_at_one_step_leaves_the_earlier_steps_alone(faithful):
    with torch.no_grad():
        before = faithful.own()[1]
        edit = at_steps(torch.tensor([2]), lambda w, m, b: w.flip(-1))
        with intervening(faithful.model, edit):
            after = faithful.own()[1]
    assert torch.equal(before[:2], after[:2])
    assert not torch.allclose(before[2], after[2])


def test_agreement_is_kendall_tau_and_nan_without_an_order():
    attention = np.array([[0.7, 0.2, 0.1], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    relevance = np.array([[-3.0, 2.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0, 3.0]])
    taus = agreement(attention, relevance)
    assert taus[0] == pytest.approx(1.0)            # magnitudes in the same order
    assert taus[1] < 0
    assert np.isnan(taus[2])


def test_jsd_is_zero_for_equal_rows_and_one_for_disjoint_ones():
    p = torch.tensor([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    q = torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert torch.allclose(jsd(p, q), torch.tensor([0.0, 1.0]))
