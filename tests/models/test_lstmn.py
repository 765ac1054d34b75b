"""The LSTMN against its loop reference (values and float64 gradients), padding invariance,
stacked layers, and the LSTMN as a translation encoder."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck
from torch.func import functional_call

from attnlab.attention import SCORES
from attnlab.errors import ConfigError
from attnlab.models import LSTMN, EncoderConfig, ModelConfig, build_model
from attnlab.models.lstmn import LSTMNEncoder
from references.lstmn import lstmn_loop

# Right padding (rows 1, 2), a sentence of one token (row 3), and holes (row 4): the reference
# reads only the real tokens, so all of them must agree.
MASK = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 0, 0, 0, 0],
                     [0, 1, 0, 1, 1]], dtype=torch.bool)


def make(score="additive", *, input_dim=3, hidden_dim=4, layers=2, seed=0, **options):
    torch.manual_seed(seed)
    return LSTMN(input_dim, hidden_dim, layers=layers, score=score, max_len=8,
                 **options).double().eval()


def inputs(batch=5, length=5, dim=3, seed=1):
    return torch.randn(batch, length, dim, dtype=torch.double,
                       generator=torch.Generator().manual_seed(seed))


def assert_matches_reference(lstmn, x, mask):
    out = lstmn(x, mask)
    outputs, weights, (h, c) = lstmn_loop(lstmn, x, mask)
    torch.testing.assert_close(out.outputs, outputs)
    torch.testing.assert_close(out.weights, weights)
    torch.testing.assert_close(out.final[0], h)
    torch.testing.assert_close(out.final[1], c)


@pytest.mark.parametrize("score", sorted(SCORES))
def test_matches_loop_reference(score):
    assert_matches_reference(make(score), inputs(), MASK)


@pytest.mark.parametrize("score", ["additive", "general", "dot", "location"])
def test_gradients_match_loop_reference(score):
    lstmn, x = make(score), inputs().requires_grad_()
    probe = torch.randn(5, 5, 4, dtype=torch.double)  # a random scalar function of everything

    def gradients(run):
        outputs, weights, (h, c) = run()
        total = (outputs * probe).sum() + (weights**2).sum() + h.sum() + (c**3).sum()
        return torch.autograd.grad(total, [x, *lstmn.parameters()])

    fast = gradients(lambda: (lambda o: (o.outputs, o.weights, o.final))(lstmn(x, MASK)))
    slow = gradients(lambda: lstmn_loop(lstmn, x, MASK))
    for a, b in zip(fast, slow, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("score", ["additive", "general", "scaled_dot"])
def test_gradcheck_inputs_and_parameters(score):
    lstmn = make(score, input_dim=2, hidden_dim=2, layers=2)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    names = [name for name, _ in lstmn.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in lstmn.parameters()]
    x = inputs(2, 3, 2).requires_grad_()

    def run(x, *ps):
        out = functional_call(lstmn, dict(zip(names, ps, strict=True)), args=(x, mask))
        return out.outputs, out.weights, *out.final

    assert gradcheck(run, (x, *params), eps=1e-6, atol=1e-5)


@settings(max_examples=25)
@given(batch=st.integers(1, 3), length=st.integers(1, 6), layers=st.integers(1, 3),
       score=st.sampled_from(sorted(SCORES)), seed=st.integers(0, 2**16), data=st.data())
def test_random_lengths_and_masks_match_reference(batch, length, layers, score, seed, data):
    bits = st.lists(st.booleans(), min_size=length, max_size=length)
    mask = torch.tensor(data.draw(st.lists(bits, min_size=batch, max_size=batch)))
    lstmn = make(score, input_dim=2, hidden_dim=3, layers=layers, seed=seed)
    assert_matches_reference(lstmn, inputs(batch, length, 2, seed=seed), mask)


def test_padding_cannot_change_real_positions():
    lstmn, x = make(), inputs()
    lengths = torch.tensor([5, 3, 4, 1, 2])
    mask = torch.arange(5) < lengths.unsqueeze(1)
    out = lstmn(x, mask)
    noisy = torch.where(mask.unsqueeze(-1), x, 100 * torch.randn_like(x))  # garbage in padding
    longer = torch.cat([noisy, torch.randn(5, 3, 3, dtype=torch.double)], 1)  # and more of it
    padded = lstmn(longer, torch.cat([mask, torch.zeros(5, 3, dtype=torch.bool)], 1))
    torch.testing.assert_close(padded.outputs[:, :5], out.outputs)
    torch.testing.assert_close(padded.weights[:, :, :5, :5], out.weights)
    torch.testing.assert_close(padded.final, out.final)
    assert padded.outputs[~torch.cat([mask, torch.zeros(5, 3, dtype=torch.bool)], 1)].eq(0).all()
    # Each sentence alone, unpadded, gives the same as in the batch.
    for b, n in enumerate(lengths.tolist()):
        alone = lstmn(x[b : b + 1, :n])
        torch.testing.assert_close(alone.outputs[0], out.outputs[b, :n])
        torch.testing.assert_close(alone.final[0][:, 0], out.final[0][:, b])


def test_weights_are_distributions_over_earlier_real_positions():
    out = make(layers=3)(inputs(), MASK)
    weights = out.weights  # (L, B, T, T)
    assert weights.shape == (3, 5, 5, 5)
    assert torch.triu(weights).eq(0).all()  # row t only over i < t
    earlier_real = (MASK.cumsum(1) - MASK.long()) > 0  # (B, T): a real token before t
    rows = weights.sum(-1)
    torch.testing.assert_close(rows[:, MASK & earlier_real],
                               torch.ones_like(rows[:, MASK & earlier_real]))
    assert rows[:, ~(MASK & earlier_real)].eq(0).all()  # the first step reads an empty tape
    assert weights.transpose(-1, -2)[:, ~MASK].eq(0).all()  # padding is never read


def test_final_state_is_the_last_real_position():
    out = make(layers=2)(inputs(), MASK)
    last = torch.tensor([4, 2, 3, 0, 4])
    torch.testing.assert_close(out.final[0][-1], out.outputs[torch.arange(5), last])


def test_each_state_is_projected_into_key_space_once():
    # The step-by-step path (the fused one projects h_t inside its own loop, by construction).
    lstmn, shapes = make(layers=2, fused=False), []
    for layer in lstmn.layers:
        project = layer.attention.project_keys
        layer.attention.project_keys = lambda keys, project=project: (
            shapes.append(tuple(keys.shape)) or project(keys))
    lstmn(inputs(), MASK)
    assert shapes == [(5, 1, 4)] * 10  # one new h_t per step and layer, never the whole tape


def test_dropout_between_layers_only_in_training():
    lstmn = make(layers=2, dropout=0.5)
    x = inputs()
    torch.testing.assert_close(lstmn(x, MASK).outputs, lstmn(x, MASK).outputs)
    lstmn.train()
    assert not torch.equal(lstmn(x, MASK).outputs, lstmn(x, MASK).outputs)


def test_unknown_score_and_bad_mask_are_clear():
    with pytest.raises(ValueError, match="unknown score 'nope'"):
        LSTMN(3, 4, score="nope")
    with pytest.raises(ValueError, match="mask must be bool"):
        make()(inputs(), MASK.long())


def lstmn_encoder_config(**encoder):
    return ModelConfig(encoder=EncoderConfig(kind="lstmn", embedding_dim=6, hidden_dim=5,
                                             bidirectional=False, dropout=0.0, **encoder))


@pytest.mark.parametrize("decoder", ["bahdanau", "luong", "none"])
def test_translation_encoder_annotations_and_summary(decoder):
    config = lstmn_encoder_config(layers=2)
    config.decoder.kind, config.decoder.hidden_dim, config.decoder.embedding_dim = decoder, 7, 6
    torch.manual_seed(0)
    model = build_model(config, 11, 13, max_src_len=10).eval()
    assert isinstance(model.encoder, LSTMNEncoder)
    src = torch.tensor([[4, 5, 6, 3, 0, 0], [4, 5, 6, 7, 8, 3]])
    encoded = model.encode(src, src != 0)
    assert encoded.annotations.shape == (2, 6, 5)
    torch.testing.assert_close(encoded.summary, encoded.annotations[[0, 1], [3, 5]])
    assert encoded.annotations[0, 4:].eq(0).all()
    out = model.all_positions(src, src != 0, torch.tensor([[2, 4, 5], [2, 6, 7]]))
    assert out.logits.shape == (2, 3, 13)


def test_lstmn_encoder_must_not_be_bidirectional():
    with pytest.raises(ConfigError, match="bidirectional: false"):
        build_model(ModelConfig(encoder=EncoderConfig(kind="lstmn")), 11, 13)
    with pytest.raises(ConfigError, match="model.encoder.score"):
        build_model(lstmn_encoder_config(score="nope"), 11, 13)
