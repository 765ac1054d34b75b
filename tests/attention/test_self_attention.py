"""Causal self-attention (the LSTMN's intra-attention over a finished sequence)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import CausalSelfAttention, causal_mask
from references import attention as ref

from .problems import ALL_SCORES, MAX_LEN, problems, seeded


def test_causal_mask():
    assert causal_mask(3).tolist() == [[False, False, False], [True, False, False],
                                       [True, True, False]]
    assert causal_mask(2, strict=False).tolist() == [[True, False], [True, True]]


@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("name", ALL_SCORES)
@settings(max_examples=10)
@given(data=st.data())
def test_matches_loop_reference(name, include_self, data):
    problem = data.draw(problems(name))
    x = problem.keys  # (B, T, D): a sequence attending to itself
    attention = seeded(CausalSelfAttention(name, query_dim=x.shape[-1], max_len=MAX_LEN,
                                           include_self=include_self), problem.seed)
    context, weights = attention(x, mask=problem.mask)
    ref_context, ref_weights = ref.causal_loop(attention.attention.score, x, x, x, problem.mask,
                                               include_self)
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(context, ref_context)


def test_later_positions_cannot_change_earlier_outputs():
    attention = CausalSelfAttention("additive", query_dim=4)
    x = torch.randn(2, 6, 4)
    changed = x.clone()
    changed[:, 4:] = torch.randn(2, 2, 4) * 10
    first, _ = attention(x)
    second, _ = attention(changed)
    torch.testing.assert_close(second[:, :4], first[:, :4])
    assert torch.all(first[:, 0] == 0)  # nothing before the first word
