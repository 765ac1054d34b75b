"""The LSTMN language model's self-attention: the intervention hook against the loop reference,
and the faithfulness tests on hand-built models whose answer is known.

Both hand-built models (float64, one layer, a location score) attend from every step t >= 2 to
position 1, the sentence's first word, with all but e^-30 of the weight. Half of each state
holds the current word (one-hot through tanh), the other half a copy of what attention read.
The faithful model predicts from the copy: its next word at every tested step is the first
word, read through attention and from nothing else. The unfaithful one predicts from the
current word: its attention points at position 1 and explains nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.explain.faithfulness import erasure_flips, permutation_tvd, step_agreement
from attnlab.explain.forced import ForcedSentence, gradient_x_input
from attnlab.explain.intervene import at_steps, intervening, uniform
from attnlab.models import LSTMN, LanguageModel, LSTMReader
from references.lstmn import lstmn_loop

VOCAB = 10                 # ids 0-3 the special tokens, 4-9 words
EMBED = VOCAB + 1          # a one-hot of the word and a constant 1
HIDDEN = 2 * VOCAB         # the current word's units, then the copy's
BIG = 1e4                  # sigmoid(BIG) is exactly 1 in float64, sigmoid(-BIG) exactly 0
WORDS = [4, 5, 6, 7, 8]    # distinct: <s> 4 5 6 7 8, steps 2..5 tested


def hand_built(faithful: bool) -> LanguageModel:
    reader = LSTMN(EMBED, HIDDEN, score="location", max_len=16)
    model = LanguageModel(VOCAB, EMBED, reader, HIDDEN).double().eval()
    layer = reader.layers[0]
    H = HIDDEN
    with torch.no_grad():
        model.embedding.weight.copy_(torch.cat([torch.eye(VOCAB), torch.ones(VOCAB, 1)], 1))
        gates, summary = layer.input_gates, layer.summary_gates
        gates.weight.zero_()
        summary.weight.zero_()
        gates.bias.copy_(torch.cat([torch.full((H,), BIG), torch.full((H,), -BIG),   # i, f
                                    torch.full((H,), BIG), torch.zeros(H)]))         # o, g
        for word in range(VOCAB):
            gates.weight[3 * H + word, word] = 1.0             # c[word] = tanh(x_word)
            summary.weight[3 * H + VOCAB + word, word] = 3.0   # c[copy of word] from h~[word]
        logits = layer.attention.score.position_logits.weight  # (max_len, EMBED + H)
        logits.zero_()
        logits[1, VOCAB] = 30.0                                # position 1, via the constant
        model.output.weight.zero_()
        model.output.bias.zero_()
        for word in range(VOCAB):
            model.output.weight[word, VOCAB + word if faithful else word] = 30.0
    return model


@pytest.fixture(scope="module")
def faithful():
    return ForcedSentence.of(hand_built(True), WORDS)


@pytest.fixture(scope="module")
def unfaithful():
    return ForcedSentence.of(hand_built(False), WORDS)


def test_the_hand_built_models_attend_to_the_first_word(faithful, unfaithful):
    for sentence, predicts in ((faithful, [WORDS[0]] * 4), (unfaithful, WORDS[1:])):
        with torch.no_grad():
            attention, probs = sentence.own()
        assert (attention[2:, 1] > 1 - 1e-9).all()
        assert probs[2:].argmax(-1).tolist() == predicts


def test_gradient_x_input_finds_the_one_earlier_position_that_matters(faithful, unfaithful):
    gradient = np.abs(gradient_x_input(faithful))
    assert gradient.shape == (6, 6) and (np.triu(gradient, 1) == 0).all()   # left to right
    for t in range(2, 6):
        assert gradient[t, 1] > 1e-3
        assert np.delete(gradient[t, :t], 1).max() < 1e-9
    assert (gradient_x_input(unfaithful)[np.tril_indices(6, -1)] == 0).all()


def test_erasure_flips_only_the_attended_position_of_a_faithful_model(faithful):
    flips = erasure_flips(faithful, gradient_x_input(faithful), torch.Generator().manual_seed(0))
    assert flips.steps == 4                         # steps 2..5: two earlier positions or more
    assert flips.top_attention == 4                 # the next word needs position 1
    assert flips.top_gradient == 4                  # gradient ranks position 1 first
    assert flips.random == 0                        # the others had no weight to lose


def test_erasure_flips_nothing_when_the_next_word_ignores_attention(unfaithful):
    flips = erasure_flips(unfaithful, gradient_x_input(unfaithful),
                          torch.Generator().manual_seed(0))
    assert (flips.steps, flips.top_attention, flips.random, flips.top_gradient) == (4, 0, 0, 0)


def test_steps_with_fewer_than_two_earlier_positions_are_not_tested(faithful):
    sentence = ForcedSentence.of(faithful.model, [4])            # <s> 4: steps 0 and 1
    flips = erasure_flips(sentence, gradient_x_input(sentence), torch.Generator().manual_seed(0))
    assert flips.steps == 0
    with torch.no_grad():
        attention = sentence.own()[0].numpy()
    assert step_agreement(sentence, attention, gradient_x_input(sentence)).size == 0
    assert permutation_tvd(sentence, torch.Generator().manual_seed(0)).size == 0


def test_permutation_moves_a_faithful_next_word_and_not_an_unfaithful_one(faithful, unfaithful):
    moved = permutation_tvd(faithful, torch.Generator().manual_seed(0))
    still = permutation_tvd(unfaithful, torch.Generator().manual_seed(0))
    assert moved.shape == still.shape == (4,)
    # from step 3 on, most shuffles move position 1's weight away: the next word changes (at
    # step 2 half of them keep the order of its two positions)
    assert moved[1:].min() > 0.5
    assert still.max() < 1e-12


def test_agreement_is_positive_where_attention_points_at_what_matters(faithful, unfaithful):
    for sentence, agrees in ((faithful, True), (unfaithful, False)):
        with torch.no_grad():
            attention = sentence.own()[0].numpy()
        taus = step_agreement(sentence, attention, gradient_x_input(sentence))
        assert taus.shape == (4,)
        if agrees:
            assert (taus > 0.5).all()
        else:
            assert np.isnan(taus).all()             # no earlier position matters: no order


def test_agreement_reads_each_step_over_its_earlier_positions_only():
    attention = np.zeros((4, 4))
    attention[2, :2] = [0.9, 0.1]
    attention[3, :3] = [0.1, 0.2, 0.7]
    gradient = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [5.0, -1.0, 99, 0], [1.0, -2.0, 3.0, 99]])
    sentence = ForcedSentence.of(hand_built(True), [4, 5, 6])   # steps 2 and 3 tested
    assert step_agreement(sentence, attention, gradient).tolist() == pytest.approx([1.0, 1.0])


def test_uniform_attention_changes_only_a_faithful_model(faithful, unfaithful):
    for sentence, changes in ((faithful, True), (unfaithful, False)):
        with torch.no_grad():
            before = sentence.own()[1]
            with intervening(sentence.model, uniform):
                after = sentence.own()[1]
        assert bool((before[2:].argmax(-1) != after[2:].argmax(-1)).any()) == changes


# --- the hook -------------------------------------------------------------------------------


def additive(layers: int = 2, fused: bool = True) -> LanguageModel:
    """A random float64 LSTMN language model with the paper's (fused) additive score."""
    torch.manual_seed(0)
    reader = LSTMN(5, 6, layers=layers, fused=fused)
    return LanguageModel(VOCAB, 5, reader, 6).double().eval()


def sentence_batch(copies: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    inputs = torch.tensor([[2, 4, 5, 6, 7, 8, 9]]).expand(copies, -1)
    return inputs, torch.ones_like(inputs, dtype=torch.bool)


def test_an_identity_intervention_gives_the_models_own_output():
    model = additive()
    inputs, mask = sentence_batch(3)
    with torch.no_grad():
        fused = model.all_positions(inputs, mask)                   # the fused kernel
        model.reader.layers[-1].fused = False
        stepwise = model.all_positions(inputs, mask)
        model.reader.layers[-1].fused = True
        with intervening(model, lambda weights, _mask, _step: weights):
            hooked = model.all_positions(inputs, mask)              # step by step, hooked
    assert torch.equal(hooked.logits, stepwise.logits)
    assert torch.equal(hooked.attention, stepwise.attention)
    torch.testing.assert_close(hooked.logits, fused.logits, rtol=0, atol=1e-12)
    assert model.reader.layers[-1].intervention is None            # restored


@pytest.mark.parametrize("fused", [True, False])
def test_the_hook_reads_the_weights_it_is_given_as_the_loop_reference_does(fused):
    """Uniform weights in the top layer of a stacked LSTMN, fast against the loop written from
    the equations with s^t replaced: the fused kernel must give way to the stepwise path."""
    model = additive(layers=2, fused=fused)
    inputs, mask = sentence_batch()
    embedded = model.embedding(inputs)
    with torch.no_grad(), intervening(model, uniform):
        fast = model.reader(embedded, mask)
    outputs, weights, _ = lstmn_loop(model.reader, embedded, mask,
                                     reweight=lambda t, s: torch.full_like(s, 1.0 / t))
    torch.testing.assert_close(fast.outputs, outputs)
    torch.testing.assert_close(fast.weights, weights)
    assert torch.allclose(weights[-1, 0, 3, :3], torch.full((3,), 1 / 3, dtype=torch.double))


def test_an_edit_at_one_step_per_copy_leaves_the_earlier_steps_alone():
    model = additive()
    inputs, _ = sentence_batch()
    steps = torch.tensor([2, 4])                                    # copy 0 at 2, copy 1 at 4
    with torch.no_grad():
        own = model.all_positions(inputs, torch.ones_like(inputs, dtype=torch.bool)).logits[0]
        flipped = at_steps(steps, lambda weights, mask, batch: weights.flip(-1))
        copies = inputs.expand(2, -1)
        with intervening(model, flipped):
            edited = model.all_positions(copies, torch.ones_like(copies, dtype=torch.bool)).logits
    for copy, step in enumerate(steps.tolist()):
        torch.testing.assert_close(edited[copy, :step], own[:step], rtol=0, atol=1e-12)
        assert not torch.allclose(edited[copy, step], own[step])


def test_a_reader_without_self_attention_is_refused():
    model = LanguageModel(VOCAB, 4, LSTMReader(4, 4, 1, 0.0), 4)
    with pytest.raises(ValueError, match="no self-attention"), intervening(model, uniform):
        pass
