"""Local attention where its windows meet the sentence's edges: windows hanging over either end,
windows wider than the sentence (D >= n), padding, and local-p centres p_t near 0 and near S,
against the loop reference, in float64, gradients included; and the two window kernels."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from attnlab.attention import LocalAttention
from attnlab.attention.ops import gather_rows
from attnlab.attention.windows import window_dots, window_sums
from references import attention as ref

from .problems import MAX_LEN, problems, seeded

# The sampled-matmul path (dot-product scores), the gathering path (additive), and location.
SCORES = ["general", "dot", "additive", "location"]
EDGE = settings(max_examples=25, derandomize=True, deadline=None)


def build(name, problem, window, predictive, gate_scale=1.0):
    local = LocalAttention(name, window=window, predictive=predictive, max_len=MAX_LEN,
                           **problem.dims)
    local = seeded(local, problem.seed)
    if predictive:  # a large v_p saturates the gate: p_t near 0 or near S, by the sign of v_p^T h
        with torch.no_grad():
            local.position_v.weight.mul_(gate_scale)
    return local


def assert_matches_reference(local, problem, offset=0):
    context, weights = local(problem.query, problem.keys, problem.values, problem.mask, offset)
    ref_context, ref_weights = ref.local_loop(
        local, problem.query, problem.keys, problem.values, problem.mask, offset
    )
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(context, ref_context)


@pytest.mark.parametrize("name", SCORES)
@EDGE
@given(data=st.data())
def test_local_m_windows_over_either_edge_and_wider_than_the_sentence(name, data):
    problem = data.draw(problems(name, max_keys=MAX_LEN))
    num_keys = problem.keys.shape[1]
    window = data.draw(st.integers(0, num_keys + 2))  # up to D >= n
    offset = data.draw(st.integers(-window - 3, num_keys + window + 3))  # centres off the ends
    assert_matches_reference(build(name, problem, window, False), problem, offset)


@pytest.mark.parametrize("name", SCORES)
@EDGE
@given(data=st.data())
def test_local_p_centres_near_zero_and_near_the_sentence_end(name, data):
    problem = data.draw(problems(name, max_keys=MAX_LEN))
    window = data.draw(st.integers(1, problem.keys.shape[1] + 2))
    gate_scale = data.draw(st.sampled_from([0.1, 4.0, 40.0]))
    local = build(name, problem, window, True, gate_scale)
    assert_matches_reference(local, problem)


def test_saturated_gates_put_centres_at_the_real_ends():
    mask = torch.tensor([[True] * 5 + [False] * 3])
    query = torch.randn(1, 4, 3, dtype=torch.float64)
    keys = torch.randn(1, 8, 3, dtype=torch.float64)
    local = LocalAttention("general", window=2, predictive=True, query_dim=3, key_dim=3).double()
    with torch.no_grad():
        local.position_proj.weight.copy_(torch.eye(3))
        local.position_v.weight.copy_(torch.full((1, 3), 1e3))
    query = query.abs() + 0.5  # v_p^T tanh(W_p q) >> 0: gate ~ 1, p_t ~ S = 4 (real length 5)
    out = local.attend_window(query, keys, mask=mask)
    torch.testing.assert_close(out.centres, torch.full((1, 4), 4.0, dtype=torch.float64))
    out = local.attend_window(-query, keys, mask=mask)  # gate ~ 0, p_t ~ 0
    torch.testing.assert_close(out.centres, torch.zeros(1, 4, dtype=torch.float64))
    weights = out.dense_weights(8)
    assert torch.all(weights[..., 3:] == 0) and torch.all(weights[..., :3] > 0)  # [0, 2] only


MASK = torch.tensor([[True, True, True, False, False], [False] * 5, [True] * 5])


@pytest.mark.parametrize("predictive", [False, True], ids=["local-m", "local-p"])
@pytest.mark.parametrize("window", [1, 4, 7])  # 7: the window is wider than the sentence
@pytest.mark.parametrize("name", ["general", "additive"])
def test_float64_gradients_at_the_edges(name, window, predictive):
    torch.manual_seed(window)
    local = LocalAttention(name, window=window, predictive=predictive, query_dim=3,
                           key_dim=3).double()
    inputs = [torch.randn(3, 4, 3, dtype=torch.float64, requires_grad=True),
              torch.randn(3, 5, 3, dtype=torch.float64, requires_grad=True),
              torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)]
    offset = -2 if not predictive else 0  # local-m: the first windows hang over the start

    def run(query, keys, values):
        return local(query, keys, values, MASK, offset)

    assert gradcheck(run, inputs, eps=1e-6, atol=1e-5)


@EDGE
@given(batch=st.integers(1, 3), queries=st.integers(1, 4), num_rows=st.integers(1, 6),
       width=st.integers(1, 9), hidden=st.integers(1, 4), seed=st.integers(0, 2**16),
       data=st.data())
def test_window_kernels_match_gathering(batch, queries, num_rows, width, hidden, seed, data):
    first = torch.tensor(data.draw(st.lists(
        st.integers(-width - 2, num_rows + 2), min_size=batch * queries,
        max_size=batch * queries))).view(batch, queries)
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, queries, hidden, generator=gen, dtype=torch.float64)
    rows = torch.randn(batch, num_rows, hidden, generator=gen, dtype=torch.float64)
    weights = torch.randn(batch, queries, width, generator=gen, dtype=torch.float64)
    positions = first.unsqueeze(-1) + torch.arange(width)  # (B, Tq, W)
    inside = (positions >= 0) & (positions < num_rows)
    clamped = positions.clamp(0, num_rows - 1)
    gathered = gather_rows(rows, clamped)  # (B, Tq, W, H)
    dots = window_dots(query, rows, first, width)
    expected = (gathered @ query.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(dots[inside], expected[inside])
    assert torch.isfinite(dots).all()
    sums = window_sums(weights, rows, clamped)
    torch.testing.assert_close(sums, (weights.unsqueeze(-2) @ gathered).squeeze(-2))
