"""Decoders keep local attention's weights as windows (issue 25): against the same model reading
dense (B, T, S) weights (its attention layer's `compact` replaced by the dense `forward`, what
decoders did before), the logits, the densified weights and the gradients are the same, for
local-m and local-p, both routes, teacher forcing and step by step (greedy and beam search)."""

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import WindowWeights, as_dense
from attnlab.data import BOS_ID, EOS_ID, PAD_ID
from attnlab.decode import beam_search, greedy_search
from models.variants import FIRST_WORD, V, translation_model

LOCAL = ["bahdanau-additive-local-m", "bahdanau-general-local-p", "luong-feed-dot-local-m",
         "luong-nofeed-general-local-m", "luong-feed-lstm-additive-local-p",
         "luong-nofeed-general-local-p"]
ROUTES = {"dense": 10**9, "windows": 0}  # dense_up_to: whole source scored, or windows only
EXACT = {"rtol": 0.0, "atol": 0.0}
CASES = settings(max_examples=6, deadline=None)


def densifying(model):
    """A copy of model whose decoder reads dense (B, T, S) weights, as before issue 25."""
    dense = copy.deepcopy(model)
    layer = dense.decoder.attention
    layer.compact = layer.forward
    return dense


def pair(name, route, seed):
    model = translation_model(name, seed=seed).double()
    model.decoder.attention.mechanism.dense_up_to = ROUTES[route]
    return model, densifying(model)


@st.composite
def batches(draw):
    """src (B, S) / mask; tgt_in (B, T) = BOS + words and tgt_out (B, T) = words + EOS, padded."""
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    sources = draw(st.lists(st.integers(1, 11), min_size=1, max_size=3))
    targets = draw(st.lists(st.integers(0, 5), min_size=len(sources), max_size=len(sources)))
    src = torch.full((len(sources), max(sources)), PAD_ID)
    tgt_in = torch.full((len(sources), max(targets) + 1), PAD_ID)
    tgt_out = tgt_in.clone()
    for row, (n, m) in enumerate(zip(sources, targets, strict=True)):
        src[row, : n - 1] = torch.randint(FIRST_WORD, V, (n - 1,), generator=gen)
        src[row, n - 1] = EOS_ID
        words = torch.randint(FIRST_WORD, V, (m,), generator=gen)
        tgt_in[row, : m + 1] = torch.cat([torch.tensor([BOS_ID]), words])
        tgt_out[row, : m + 1] = torch.cat([words, torch.tensor([EOS_ID])])
    return src, src != PAD_ID, tgt_in, tgt_out


def teacher_forced(model, src, mask, tgt_in, tgt_out):
    """Training mode with dropout under one seed: logits, weights and every gradient."""
    tgt_mask = tgt_out != PAD_ID
    model.train().zero_grad()
    torch.manual_seed(0)
    out = model(src, mask, tgt_in, tgt_mask)
    model.loss(out, tgt_out, tgt_mask, label_smoothing=0.1).loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    return out.logits, as_dense(out.attention), grads


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", LOCAL)
@CASES
@given(batch=batches(), seed=st.integers(0, 99))
def test_training_gives_the_dense_models_logits_weights_and_gradients(name, route, batch, seed):
    model, dense = pair(name, route, seed)
    src, mask, tgt_in, tgt_out = batch
    out = model(src, mask, tgt_in, tgt_out != PAD_ID)
    assert isinstance(out.attention, WindowWeights)  # never a (B, T, S) tensor
    logits, weights, grads = teacher_forced(model, src, mask, tgt_in, tgt_out)
    ref_logits, ref_weights, ref_grads = teacher_forced(dense, src, mask, tgt_in, tgt_out)
    torch.testing.assert_close(logits, ref_logits, **EXACT)
    torch.testing.assert_close(weights, ref_weights, **EXACT)
    assert len(grads) == len(ref_grads)
    for grad, ref_grad in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(grad, ref_grad)


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", LOCAL)
@CASES
@given(batch=batches(), seed=st.integers(0, 99))
def test_steps_give_the_dense_models_logits_and_weights(name, route, batch, seed):
    model, dense = pair(name, route, seed)
    src, mask, tgt_in, _ = batch
    with torch.no_grad():
        model.eval(), dense.eval()
        full = model.all_positions(src, mask, tgt_in)
        state, ref_state = model.start(src, mask), dense.start(src, mask)
        for t in range(tgt_in.shape[1]):
            logits, weights, state = model.step(tgt_in[:, t], state)
            ref_logits, ref_weights, ref_state = dense.step(tgt_in[:, t], ref_state)
            assert isinstance(weights, WindowWeights) and weights.start.shape == (len(src),)
            torch.testing.assert_close(logits, ref_logits, **EXACT)
            torch.testing.assert_close(weights.dense(), ref_weights, **EXACT)
            torch.testing.assert_close(weights.dense(), as_dense(full.attention)[:, t])


def assert_same_hypotheses(found, expected):
    assert len(found) == len(expected)
    for got, want in zip(found, expected, strict=True):
        assert got.tokens == want.tokens
        assert got.score == want.score and got.log_prob == want.log_prob
        assert isinstance(got.attention, torch.Tensor)  # a returned hypothesis is dense
        torch.testing.assert_close(got.attention, want.attention, **EXACT)


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", LOCAL)
@CASES
@given(batch=batches(), seed=st.integers(0, 99), beam=st.integers(1, 3),
       beta=st.sampled_from([0.0, 0.5]))
def test_search_finds_the_dense_models_hypotheses(name, route, batch, seed, beam, beta):
    from attnlab.decode import Penalty

    model, dense = pair(name, route, seed)
    src, mask = batch[0], batch[1]
    penalty = Penalty(beta=beta)  # the coverage penalty reads each hypothesis's attention

    def limit(n):
        return 2 * n + 1

    assert_same_hypotheses(greedy_search(model, src, mask, max_len=limit, penalty=penalty),
                           greedy_search(dense, src, mask, max_len=limit, penalty=penalty))
    found = beam_search(model, src, mask, beam_size=beam, max_len=limit, n_best=beam,
                        penalty=penalty)
    expected = beam_search(dense, src, mask, beam_size=beam, max_len=limit, n_best=beam,
                           penalty=penalty)
    for got, want in zip(found, expected, strict=True):
        assert_same_hypotheses(got, want)
