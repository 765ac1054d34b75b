"""Global soft attention: every score against the loop reference, and the properties of
docs/equations.md."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import SCORES, Attention
from references import attention as ref

from .problems import ALL_SCORES, MAX_LEN, problems, seeded


def build(name, problem):
    attention = Attention(name, max_len=MAX_LEN, **problem.dims)
    return seeded(attention, problem.seed)


def test_scores_table_has_the_papers_seven_names():
    # >=: a score added later is picked up by every test below without editing them
    assert set(SCORES) >= {"cosine", "additive", "concat", "location", "general", "dot",
                           "scaled_dot"}


@pytest.mark.parametrize("name", ALL_SCORES)
@settings(max_examples=25)
@given(data=st.data())
def test_matches_loop_reference(name, data):
    problem = data.draw(problems(name))
    attention = build(name, problem)
    context, weights = attention(problem.query, problem.keys, problem.values, problem.mask)
    ref_context, ref_weights = ref.attend_loop(
        attention.score, problem.query, problem.keys, problem.values, problem.mask
    )
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(context, ref_context)


@pytest.mark.parametrize("name", ALL_SCORES)
@settings(max_examples=15)
@given(data=st.data())
def test_weights_are_distributions_over_real_keys(name, data):
    problem = data.draw(problems(name))
    _, weights = build(name, problem)(problem.query, problem.keys, problem.values, problem.mask)
    mask = problem.mask.unsqueeze(1).expand_as(weights)
    assert torch.all(weights[~mask] == 0)
    sums = weights.sum(-1)  # (B, Tq)
    has_real = problem.mask.any(-1, keepdim=True).expand_as(sums)
    torch.testing.assert_close(sums[has_real], torch.ones_like(sums[has_real]))
    assert torch.all(sums[~has_real] == 0)


@pytest.mark.parametrize("name", ALL_SCORES)
@settings(max_examples=15)
@given(data=st.data())
def test_padded_keys_and_values_cannot_change_output(name, data):
    problem = data.draw(problems(name))
    attention = build(name, problem)
    padding = ~problem.mask.unsqueeze(-1)
    noisy_keys = torch.where(padding, 100 * torch.randn_like(problem.keys), problem.keys)
    noisy_values = torch.where(padding, -50 * torch.randn_like(problem.values), problem.values)
    before = attention(problem.query, problem.keys, problem.values, problem.mask)
    after = attention(problem.query, noisy_keys, noisy_values, problem.mask)
    torch.testing.assert_close(after, before)


@pytest.mark.parametrize("name", ALL_SCORES)
def test_all_masked_row_gives_zeros_not_nan(name):
    query, keys = torch.randn(2, 3, 4), torch.randn(2, 5, 4, requires_grad=True)
    mask = torch.tensor([[False] * 5, [True, True, False, False, False]])
    attention = Attention(name, query_dim=4, key_dim=4, max_len=5)
    context, weights = attention(query, keys, mask=mask)
    assert torch.all(weights[0] == 0) and torch.all(context[0] == 0)
    context.sum().backward()
    assert torch.isfinite(keys.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in attention.parameters() if p.grad is not None)


def test_location_ignores_key_content():
    attention = Attention("location", query_dim=3, key_dim=4, max_len=6)
    query = torch.randn(2, 5, 3)
    _, weights = attention(query, torch.randn(2, 6, 4))
    _, other_weights = attention(query, torch.randn(2, 6, 4) * 7)
    torch.testing.assert_close(weights, other_weights)


def test_location_is_cut_and_renormalised_softmax_over_positions():
    attention = Attention("location", query_dim=3, key_dim=2, max_len=6)
    query = torch.randn(1, 1, 3)
    full = torch.softmax(attention.score.position_logits(query), -1)  # (1, 1, 6)
    _, weights = attention(query, torch.randn(1, 4, 2))
    torch.testing.assert_close(weights, full[..., :4] / full[..., :4].sum(-1, keepdim=True))


@pytest.mark.parametrize("name", ALL_SCORES)
def test_one_step_query_and_reused_projection_equal_the_sequence_call(name):
    attention = Attention(name, query_dim=4, key_dim=4, max_len=6)
    query, keys, values = torch.randn(3, 2, 4), torch.randn(3, 6, 4), torch.randn(3, 6, 2)
    mask = torch.rand(3, 6) > 0.3
    context, weights = attention(query, keys, values, mask)
    projected = attention.project_keys(keys)
    for t in range(2):
        step_context, step_weights = attention(query[:, t], keys, values, mask,
                                               projected_keys=projected)
        assert step_context.shape == (3, 2) and step_weights.shape == (3, 6)
        torch.testing.assert_close(step_context, context[:, t])
        torch.testing.assert_close(step_weights, weights[:, t])


@pytest.mark.parametrize("queries", [1, 7])
def test_scaled_dot_equals_torch_sdpa(queries):
    attention = Attention("scaled_dot", query_dim=16, key_dim=16)
    query, keys, values = torch.randn(4, queries, 16), torch.randn(4, 9, 16), torch.randn(4, 9, 5)
    mask = torch.rand(4, 9) > 0.4
    mask[:, 0] = True  # SDPA returns NaN for a query with no real key; attnlab returns zeros
    context, _ = attention(query, keys, values, mask)
    expected = F.scaled_dot_product_attention(query, keys, values, attn_mask=mask.unsqueeze(1))
    torch.testing.assert_close(context, expected)


@pytest.mark.parametrize("name", ["additive", "general", "cosine"])
def test_key_projection_is_done_once_per_sentence(name, monkeypatch):
    attention = Attention(name, query_dim=4, key_dim=4)
    keys = torch.randn(2, 5, 4)
    calls = []
    original = attention.score.project_keys
    monkeypatch.setattr(attention.score, "project_keys", lambda k: calls.append(1) or original(k))
    projected = attention.project_keys(keys)
    for _ in range(4):
        attention(torch.randn(2, 4), keys, projected_keys=projected)
    assert len(calls) == 1
