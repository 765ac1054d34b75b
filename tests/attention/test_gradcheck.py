"""float64 gradient checks: inputs and parameters, with masks that include an empty row."""

import pytest
import torch
from torch.autograd import gradcheck
from torch.func import functional_call

from attnlab.attention import Attention, CausalSelfAttention, HardAttention, LocalAttention

from .problems import ALL_SCORES

MASK = torch.tensor([[True, True, True, False, False], [False] * 5, [True] * 5])


class Call(torch.nn.Module):
    """Wraps `call(module, *inputs)` so functional_call can swap in the parameters."""

    def __init__(self, module, call):
        super().__init__()
        self.module, self.call = module, call

    def forward(self, *inputs):
        return self.call(self.module, *inputs)


def check(module, *inputs, call):
    """gradcheck of call(module, *inputs) w.r.t. the inputs and every parameter, in float64."""
    wrapped = Call(module.double(), call)
    names = [name for name, _ in wrapped.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in wrapped.parameters()]
    inputs = [x.double().requires_grad_() for x in inputs]

    def run(*flat):
        xs, ps = flat[: len(inputs)], flat[len(inputs):]
        return functional_call(wrapped, dict(zip(names, ps, strict=True)), args=tuple(xs))

    assert gradcheck(run, (*inputs, *params), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", ALL_SCORES)
def test_global(name):
    attention = Attention(name, query_dim=3, key_dim=3, hidden_dim=4, max_len=5)
    check(attention, torch.randn(3, 2, 3), torch.randn(3, 5, 3), torch.randn(3, 5, 2),
          call=lambda m, q, k, v: m(q, k, v, MASK))


@pytest.mark.parametrize("dense_up_to", [0, 10], ids=["windows", "dense"])
@pytest.mark.parametrize("predictive", [False, True])
@pytest.mark.parametrize("name", ["additive", "general", "location", "scaled_dot"])
def test_local(name, predictive, dense_up_to):
    local = LocalAttention(name, window=1, predictive=predictive, query_dim=3, key_dim=3,
                           max_len=5)
    local.dense_up_to = dense_up_to
    check(local, torch.randn(3, 4, 3), torch.randn(3, 5, 3), torch.randn(3, 5, 2),
          call=lambda m, q, k, v: m(q, k, v, MASK, 1))


def test_causal_self_attention():
    attention = CausalSelfAttention("additive", query_dim=3)
    check(attention, torch.randn(3, 5, 3), call=lambda m, x: m(x, mask=MASK))


def test_hard_attention_log_prob_and_entropy():
    hard = HardAttention("additive", query_dim=3, key_dim=3, expectation_prob=0.0).train()

    def log_prob_and_entropy(m, q, k):
        out = m.attend(q, k, mask=MASK, generator=torch.Generator().manual_seed(0))
        return out.sample.log_prob, out.sample.entropy

    check(hard, torch.randn(3, 2, 3), torch.randn(3, 5, 3), call=log_prob_and_entropy)
