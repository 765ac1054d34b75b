"""The kernels written for a backward batched over rows (attnlab.explain.gradients): the masked
softmax's backward and tanh(a + b)'s sum over broadcast axes give autograd's own numbers, in
float64 and under hypothesis, and run batched under vmap (no op falls back to a loop)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import masked_softmax
from attnlab.attention.ops import add_tanh, sum_to


def autograd_masked_softmax(scores, mask):
    """The plain autograd version the kernel replaced: fill, softmax, zero."""
    lowest = torch.finfo(scores.dtype).min
    return torch.softmax(scores.masked_fill(~mask, lowest), -1).masked_fill(~mask, 0.0)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 4), keys=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_masked_softmax_backward_is_autograds(rows, keys, seed):
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, keys, generator=generator, dtype=torch.float64) * 3
    mask = torch.rand(rows, keys, generator=generator) > 0.4          # empty rows included
    grad = torch.randn(rows, keys, generator=generator, dtype=torch.float64)
    found_in = scores.clone().requires_grad_()
    expected_in = scores.clone().requires_grad_()
    found = masked_softmax(found_in, mask)
    expected = autograd_masked_softmax(expected_in, mask)
    torch.testing.assert_close(found, expected, rtol=0, atol=0)
    (found_grad,) = torch.autograd.grad(found, found_in, grad)
    (expected_grad,) = torch.autograd.grad(expected, expected_in, grad)
    torch.testing.assert_close(found_grad, expected_grad, rtol=1e-12, atol=1e-14)
    assert bool((found_grad[~mask] == 0).all())


def test_masked_softmax_has_a_second_derivative():
    scores = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, False, True, False], [False] * 5, [True] * 5])
    assert torch.autograd.gradgradcheck(lambda s: masked_softmax(s, mask), (scores,))


SHAPES = [((2, 1, 5, 3), (2, 4, 1, 3)), ((1, 1, 3), (4, 2, 3)), ((3,), (2, 3)), ((2, 3), (2, 3))]


@pytest.mark.parametrize(("shape_a", "shape_b"), SHAPES)
def test_sum_to_is_sum_to_size(shape_a, shape_b):
    a = torch.randn(shape_a, dtype=torch.float64)
    b = torch.randn(shape_b, dtype=torch.float64)
    grad = torch.randn(torch.broadcast_shapes(shape_a, shape_b), dtype=torch.float64)
    for shape in (shape_a, shape_b):
        torch.testing.assert_close(sum_to(grad, torch.Size(shape)), grad.sum_to_size(shape))
    assert torch.autograd.gradcheck(add_tanh, (a.requires_grad_(), b.requires_grad_()))


def test_a_backward_batched_over_rows_runs_batched(recwarn):
    """Under torch.autograd.grad(is_grads_batched=True) neither kernel's backward falls back to
    one row at a time (torch warns of each op that does, when asked to)."""
    scores = torch.randn(2, 3, 5, requires_grad=True)
    keys = torch.randn(2, 1, 5, 4, requires_grad=True)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]]).unsqueeze(1)
    weights = masked_softmax(add_tanh(scores.unsqueeze(-1), keys).sum(-1), mask)
    torch._C._debug_only_display_vmap_fallback_warnings(True)
    try:
        torch.autograd.grad(weights, [scores, keys], torch.randn(7, 2, 3, 5),
                            retain_graph=True, is_grads_batched=True)
    finally:
        torch._C._debug_only_display_vmap_fallback_warnings(False)
    fallbacks = [str(w.message) for w in recwarn if "batching rule" in str(w.message)]
    assert not fallbacks, fallbacks
