"""The fused additive LSTMN layer (models/lstmn_fused.py) against the step-by-step layer and the
loop reference: values, float64 gradients of every output, gradcheck of the autograd node
itself, and random shapes and masks (holes included)."""

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from attnlab.models import LSTMN
from attnlab.models.lstmn_fused import FusedAdditiveLSTMN
from references.lstmn import lstmn_loop


def pair(input_dim, hidden_dim, layers, attention_dim, seed, dtype=torch.double):
    """The same LSTMN twice: fused (the default for the additive score) and step by step."""
    torch.manual_seed(seed)
    fused = LSTMN(input_dim, hidden_dim, layers=layers, attention_dim=attention_dim).to(dtype)
    stepwise = copy.deepcopy(fused)
    for layer in stepwise.layers:
        layer.fused = False
    return fused.eval(), stepwise.eval()


def everything(out, probes):
    """A random scalar of every output: hidden states, weights and both final states."""
    return sum((tensor * probe).sum() for tensor, probe in
               zip((out.outputs, out.weights, *out.final), probes, strict=True))


def random_mask(data, batch, length):
    bits = st.lists(st.booleans(), min_size=length, max_size=length)
    return torch.tensor(data.draw(st.lists(bits, min_size=batch, max_size=batch)),
                        dtype=torch.bool).reshape(batch, length)


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 4), length=st.integers(1, 7), layers=st.integers(1, 2),
       sizes=st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)),
       seed=st.integers(0, 2**16), data=st.data())
def test_fused_matches_stepwise_and_reference_values_and_gradients(batch, length, layers, sizes,
                                                                    seed, data):
    input_dim, hidden_dim, attention_dim = sizes
    fused, stepwise = pair(input_dim, hidden_dim, layers, attention_dim, seed)
    mask = random_mask(data, batch, length)
    x = torch.randn(batch, length, input_dim, dtype=torch.double,
                    generator=torch.Generator().manual_seed(seed)).requires_grad_()
    fast, slow = fused(x, mask), stepwise(x, mask)
    reference = lstmn_loop(fused, x, mask)
    for a, b, c in zip((fast.outputs, fast.weights, *fast.final),
                       (slow.outputs, slow.weights, *slow.final),
                       (reference[0], reference[1], *reference[2]), strict=True):
        torch.testing.assert_close(a, b)
        torch.testing.assert_close(a, c)
    probes = [torch.randn_like(t) for t in (fast.outputs, fast.weights, *fast.final)]
    # A sentence of one token never reads the tape: the step-by-step graph leaves the attention
    # parameters out (None), the fused node gives them exact zeros.
    leaves_fast, leaves_slow = [x, *fused.parameters()], [x, *stepwise.parameters()]
    grads_fast = torch.autograd.grad(everything(fast, probes), leaves_fast, allow_unused=True)
    grads_slow = torch.autograd.grad(everything(slow, probes), leaves_slow, allow_unused=True)
    for a, b, leaf in zip(grads_fast, grads_slow, leaves_fast, strict=True):
        torch.testing.assert_close(torch.zeros_like(leaf) if a is None else a,
                                   torch.zeros_like(leaf) if b is None else b)


def test_gradcheck_of_the_autograd_node():
    batch, length, hidden, key_dim = 2, 4, 2, 3
    generator = torch.Generator().manual_seed(0)

    def leaf(*shape):
        return torch.randn(*shape, dtype=torch.double, generator=generator).requires_grad_()

    mask = torch.tensor([[True, True, False, True], [False, True, True, True]])
    args = (leaf(batch, length, 4 * hidden), leaf(batch, length, key_dim), mask,
            leaf(4 * hidden, hidden), leaf(key_dim, hidden), leaf(key_dim, hidden),
            leaf(key_dim))
    assert gradcheck(FusedAdditiveLSTMN.apply, args, eps=1e-6, atol=1e-6)


def test_float32_agrees_with_stepwise():
    fused, stepwise = pair(6, 8, 2, 5, seed=3, dtype=torch.float32)
    x = torch.randn(4, 9, 6)
    mask = torch.ones(4, 9, dtype=torch.bool)
    mask[1, 6:] = False
    mask[2, :2] = False
    torch.testing.assert_close(fused(x, mask).outputs, stepwise(x, mask).outputs,
                               atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("score", ["general", "dot", "location"])
def test_other_scores_run_step_by_step(score, monkeypatch):
    calls = []
    monkeypatch.setattr(FusedAdditiveLSTMN, "apply",
                        lambda *args: calls.append(1) or pytest.fail("fused path taken"))
    lstmn = LSTMN(3, 4, score=score, max_len=6)
    lstmn(torch.randn(2, 5, 3))
    assert calls == []


def test_additive_layers_take_the_fused_node_once_each(monkeypatch):
    calls, apply = [], FusedAdditiveLSTMN.apply
    monkeypatch.setattr(FusedAdditiveLSTMN, "apply", lambda *args: calls.append(1) or apply(*args))
    LSTMN(3, 4, layers=3).train()(torch.randn(2, 5, 3)).outputs.sum().backward()
    assert calls == [1, 1, 1]
