"""Local-m and local-p attention against the loop reference, and the window properties."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.attention import LocalAttention
from references import attention as ref

from .problems import ALL_SCORES, MAX_LEN, problems, seeded

# A short source is scored whole and masked to the windows ("dense"), a long one window by
# window ("windows"); `dense_up_to` (in windows) chooses, so each test can take either route.
ROUTES = {"dense": 10**9, "windows": 0}


def build(name, problem, window, predictive, route="windows"):
    local = LocalAttention(name, window=window, predictive=predictive, max_len=MAX_LEN,
                           **problem.dims)
    local.dense_up_to = ROUTES[route]
    return seeded(local, problem.seed)


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("predictive", [False, True], ids=["local-m", "local-p"])
@pytest.mark.parametrize("name", ALL_SCORES)
@settings(max_examples=20)
@given(data=st.data())
def test_matches_loop_reference(name, predictive, route, data):
    problem = data.draw(problems(name))
    window = data.draw(st.integers(1 if predictive else 0, 3))
    offset = data.draw(st.integers(-2, 6))
    local = build(name, problem, window, predictive, route)
    context, weights = local(problem.query, problem.keys, problem.values, problem.mask, offset)
    ref_context, ref_weights = ref.local_loop(
        local, problem.query, problem.keys, problem.values, problem.mask, offset
    )
    torch.testing.assert_close(weights, ref_weights)
    torch.testing.assert_close(context, ref_context)


@pytest.mark.parametrize("predictive", [False, True], ids=["local-m", "local-p"])
@settings(max_examples=30)
@given(data=st.data())
def test_weights_vanish_outside_the_window_and_on_padding(predictive, data):
    problem = data.draw(problems("general", max_keys=12))
    window = data.draw(st.integers(1, 3))
    local = build("general", problem, window, predictive)
    query = problem.query
    out = local.attend_window(query, problem.keys, problem.values, problem.mask, offset=2)
    weights = out.dense_weights(problem.keys.shape[1])  # (B, Tq, Tk)
    centre = out.centres.round().long().unsqueeze(-1)  # (B, Tq, 1)
    positions = torch.arange(problem.keys.shape[1])
    outside = (positions < centre - window) | (positions > centre + window)
    assert torch.all(weights[outside] == 0)
    assert torch.all(weights[~problem.mask.unsqueeze(1).expand_as(weights)] == 0)
    sums = weights.sum(-1)
    assert torch.all(sums <= 1 + 1e-9)
    if not predictive:  # local-m: a distribution over the real keys in the window
        has_real = ((~outside) & problem.mask.unsqueeze(1)).any(-1)
        torch.testing.assert_close(sums[has_real], torch.ones_like(sums[has_real]))


def test_local_m_centres_follow_offset_plus_t():
    local = LocalAttention("dot", window=1, predictive=False, query_dim=3, key_dim=3)
    out = local.attend_window(torch.randn(2, 4, 3), torch.randn(2, 9, 3), offset=3)
    torch.testing.assert_close(out.centres, torch.tensor([[3.0, 4, 5, 6]] * 2))


def test_local_p_centre_lies_within_the_real_sentence_and_is_differentiable():
    local = LocalAttention("general", window=2, predictive=True, query_dim=3, key_dim=3)
    mask = torch.tensor([[True] * 4 + [False] * 6, [True] * 10])
    query = torch.randn(2, 5, 3, requires_grad=True)
    out = local.attend_window(query, torch.randn(2, 10, 3), mask=mask)
    assert torch.all(out.centres[0] <= 3) and torch.all(out.centres[1] <= 9)
    assert torch.all(out.centres >= 0)
    out.context.sum().backward()
    assert local.position_v.weight.grad.abs().sum() > 0  # learns where to look via the Gaussian


@pytest.mark.parametrize("predictive", [False, True])
@pytest.mark.parametrize("name", ALL_SCORES)
def test_scores_only_the_window_and_projects_keys_once(name, predictive, monkeypatch):
    local = LocalAttention(name, window=2, predictive=predictive, query_dim=4, key_dim=4,
                           max_len=40)
    score = local.score
    projections, windows = [], []

    def full_matrix(*args):
        raise AssertionError("local attention must not score the full Tq x Tk matrix")

    original_project, original_window = score.project_keys, local.window_scores
    monkeypatch.setattr(score, "forward", full_matrix)
    monkeypatch.setattr(score, "project_keys",
                        lambda k: projections.append(k.shape) or original_project(k))
    monkeypatch.setattr(local, "window_scores",
                        lambda q, k, p: windows.append(p.shape) or original_window(q, k, p))
    local(torch.randn(3, 20, 4), torch.randn(3, 40, 4), offset=5)
    assert projections == [(3, 40, 4)]
    assert windows == [(3, 20, 5)]  # (B, Tq, 2D + 1), never (B, Tq, Tk)


@pytest.mark.parametrize("predictive", [False, True])
def test_one_step_with_offset_equals_the_sequence_call(predictive):
    local = LocalAttention("additive", window=2, predictive=predictive, query_dim=4, key_dim=3)
    query, keys = torch.randn(2, 5, 4), torch.randn(2, 8, 3)
    mask = torch.ones(2, 8, dtype=torch.bool)
    mask[1, 6:] = False
    context, weights = local(query, keys, mask=mask)
    projected = local.project_keys(keys)
    for t in range(5):
        step_context, step_weights = local(query[:, t], keys, mask=mask, offset=t,
                                           projected_keys=projected)
        torch.testing.assert_close(step_context, context[:, t])
        torch.testing.assert_close(step_weights, weights[:, t])


def test_padded_keys_cannot_change_local_output():
    local = LocalAttention("concat", window=3, predictive=True, query_dim=4, key_dim=4)
    query, keys, values = torch.randn(2, 6, 4), torch.randn(2, 9, 4), torch.randn(2, 9, 2)
    mask = torch.tensor([[True] * 5 + [False] * 4, [True] * 9])
    noisy_keys, noisy_values = keys.clone(), values.clone()
    noisy_keys[0, 5:] = 1e3
    noisy_values[0, 5:] = -1e3
    torch.testing.assert_close(local(query, noisy_keys, noisy_values, mask),
                               local(query, keys, values, mask))


# Two queries per chunk (five chunks, the last short): the additive score gathers (B, C, W, H)
# windows of H=4 (= query_dim), dot-product scores gather nothing and count (B, C, W) elements.
@pytest.mark.parametrize(("name", "chunk_elements"), [("additive", 2 * 2 * 5 * 4),
                                                      ("general", 2 * 2 * 5)])
@pytest.mark.parametrize("predictive", [False, True])
def test_chunked_queries_give_the_same_result(name, chunk_elements, predictive):
    local = LocalAttention(name, window=2, predictive=predictive, query_dim=4, key_dim=3)
    query, keys, values = torch.randn(2, 9, 4), torch.randn(2, 8, 3), torch.randn(2, 8, 5)
    mask = torch.rand(2, 8) > 0.2
    whole = local(query, keys, values, mask, offset=1)  # 8 keys <= 3 windows: the dense route
    local.chunk_elements, local.dense_up_to = chunk_elements, 0  # the window route, in chunks
    chunks = []
    original = local._attend_chunk
    local._attend_chunk = lambda q, *rest: chunks.append(q.shape[1]) or original(q, *rest)
    torch.testing.assert_close(local(query, keys, values, mask, offset=1), whole)
    assert chunks == [2, 2, 2, 2, 1]


@pytest.mark.parametrize("predictive", [False, True])
def test_a_source_of_at_most_three_windows_is_scored_whole_once(predictive, monkeypatch):
    local = LocalAttention("general", window=2, predictive=predictive, query_dim=4, key_dim=4)
    calls = []
    monkeypatch.setattr(local, "window_scores", lambda *args: calls.append("window"))
    original = local.score.forward
    monkeypatch.setattr(local.score, "forward",
                        lambda q, k: calls.append(tuple(k.shape)) or original(q, k))
    local(torch.randn(3, 6, 4), torch.randn(3, 15, 4), offset=1)  # 15 keys = 3 windows of 5
    assert calls == [(3, 15, 4)]
