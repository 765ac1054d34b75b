"""Local attention's window form (WindowWeights): `attend_compact` gives exactly the dense weights
and context of `attend` by either route, for local-m and local-p, whole targets and one step;
global and hard attention stay dense; densifying cuts, pads, joins and differentiates."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.autograd import gradcheck

from attnlab.attention import (
    Attention,
    HardAttention,
    LocalAttention,
    WindowWeights,
    as_dense,
    join_weights,
    map_weights,
)

from .problems import MAX_LEN, problems, seeded

ROUTES = {"dense": 10**9, "windows": 0}  # dense_up_to: whole source scored, or windows only
EXACT = {"rtol": 0.0, "atol": 0.0}
SCORES = ["general", "dot", "additive", "location"]


def local(name, problem, window, predictive, route):
    mechanism = LocalAttention(name, window=window, predictive=predictive, max_len=MAX_LEN,
                               **problem.dims)
    mechanism.dense_up_to = ROUTES[route]
    return seeded(mechanism, problem.seed)


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("predictive", [False, True], ids=["local-m", "local-p"])
@pytest.mark.parametrize("name", SCORES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_window_form_densifies_to_the_dense_weights(name, predictive, route, data):
    problem = data.draw(problems(name, max_keys=MAX_LEN))
    window = data.draw(st.integers(1 if predictive else 0, MAX_LEN + 1))
    offset = data.draw(st.integers(-3, MAX_LEN + 3))
    mechanism = local(name, problem, window, predictive, route)
    args = (problem.query, problem.keys, problem.values, problem.mask)
    dense = mechanism.attend(*args, first_step=offset)
    compact = mechanism.attend_compact(*args, first_step=offset)
    weights = compact.weights
    assert isinstance(weights, WindowWeights)
    batch, queries, num_keys = dense.weights.shape
    assert weights.start.shape == (batch, queries) and weights.start.dtype == torch.long
    assert weights.weights.shape == (batch, queries, 2 * window + 1)
    assert weights.source_len == num_keys
    torch.testing.assert_close(weights.dense(), dense.weights, **EXACT)
    torch.testing.assert_close(compact.context, dense.context, **EXACT)
    # one decoder step: no Tq axis, start (B,), weights (B, W)
    step = mechanism.attend_compact(problem.query[:, 0], *args[1:], first_step=offset)
    dense_step = mechanism.attend(problem.query[:, 0], *args[1:], first_step=offset)
    assert isinstance(step.weights, WindowWeights) and step.weights.start.shape == (batch,)
    torch.testing.assert_close(step.weights.dense(), dense_step.weights, **EXACT)
    torch.testing.assert_close(step.context, dense_step.context, **EXACT)


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("predictive", [False, True], ids=["local-m", "local-p"])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_window_form_has_the_dense_gradients(predictive, route, data):
    problem = data.draw(problems("general", max_keys=MAX_LEN))
    mechanism = local("general", problem, data.draw(st.integers(1, 3)), predictive, route)
    probe = torch.randn(problem.keys.shape[0], problem.query.shape[1], problem.keys.shape[1],
                        generator=torch.Generator().manual_seed(problem.seed),
                        dtype=torch.float64)

    def gradients(attend):
        query = problem.query.clone().requires_grad_(True)
        out = attend(query, problem.keys, problem.values, problem.mask)
        total = (as_dense(out.weights) * probe).sum() + out.context.sum()
        return torch.autograd.grad(total, [query, *mechanism.parameters()], allow_unused=True)

    for dense, compact in zip(gradients(mechanism.attend), gradients(mechanism.attend_compact),
                              strict=True):
        if dense is None or compact is None:
            assert dense is None and compact is None
        else:
            torch.testing.assert_close(compact, dense)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_global_and_hard_attention_stay_dense(data):
    problem = data.draw(problems("general"))
    for mechanism in (Attention("general", **problem.dims),
                      HardAttention("general", **problem.dims).eval()):
        mechanism = seeded(mechanism, problem.seed)
        args = (problem.query, problem.keys, problem.values, problem.mask)
        dense, compact = mechanism.attend(*args), mechanism.attend_compact(*args)
        assert isinstance(compact.weights, torch.Tensor)
        torch.testing.assert_close(compact.weights, dense.weights, **EXACT)
        assert as_dense(compact.weights) is compact.weights


def windows(batch=2, steps=3, width=3, source_len=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    start = torch.randint(-width, source_len + 1, (batch, steps), generator=gen)
    return WindowWeights(start, torch.rand(batch, steps, width, generator=gen,
                                           dtype=torch.float64), source_len)


def loop_dense(weights: WindowWeights, length: int) -> torch.Tensor:
    """The slow, obvious densify: every slot inside [0, length) written at its position."""
    dense = torch.zeros(*weights.start.shape, length, dtype=weights.weights.dtype)
    for index in torch.cartesian_prod(*(torch.arange(n) for n in weights.start.shape)):
        row = tuple(index.tolist())
        for slot in range(weights.width):
            position = int(weights.start[row]) + slot
            if 0 <= position < length:
                dense[row][position] = weights.weights[row][slot]
    return dense


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 3), steps=st.integers(0, 4), width=st.integers(1, 5),
       source_len=st.integers(0, 7), cut=st.integers(0, 9), seed=st.integers(0, 99))
def test_dense_writes_every_slot_inside_the_sentence(batch, steps, width, source_len, cut, seed):
    weights = windows(batch, steps, width, source_len, seed)
    torch.testing.assert_close(weights.dense(), loop_dense(weights, source_len), **EXACT)
    torch.testing.assert_close(weights.dense(cut), loop_dense(weights, cut), **EXACT)
    torch.testing.assert_close(as_dense(weights, cut), loop_dense(weights, cut), **EXACT)


def test_rows_map_and_join_like_dense_rows():
    first, second = windows(seed=1), windows(seed=2)
    joined = join_weights([first, second], lambda ts: torch.cat(ts, 1))
    torch.testing.assert_close(joined.dense(), torch.cat([first.dense(), second.dense()], 1))
    rows = torch.tensor([1, 1, 0])
    picked = map_weights(first, lambda t: t[rows])
    torch.testing.assert_close(picked.dense(), first.dense()[rows])
    assert torch.equal(map_weights(first.dense(), lambda t: t[rows]), first.dense()[rows])
    with pytest.raises(TypeError, match="cannot be joined"):
        join_weights([first, second.dense()], lambda ts: torch.cat(ts, 1))


def test_from_dense_reads_back_the_windows():
    weights = windows(batch=3, steps=4, width=5, source_len=6, seed=3)
    again = WindowWeights.from_dense(weights.dense(), weights.start, weights.width)
    torch.testing.assert_close(again.dense(), weights.dense(), **EXACT)


def test_as_dense_of_dense_weights_cuts_and_refuses_to_grow():
    dense = torch.rand(2, 3, 5)
    assert as_dense(dense) is dense
    torch.testing.assert_close(as_dense(dense, 4), dense[..., :4], **EXACT)
    with pytest.raises(ValueError, match="6 positions asked of weights over 5"):
        as_dense(dense, 6)


def test_dense_is_differentiable():
    weights = windows(batch=2, steps=2, width=3, source_len=4, seed=4)
    start = weights.start
    values = weights.weights.clone().requires_grad_(True)
    assert gradcheck(lambda w: WindowWeights(start, w, 4).dense(), (values,))
    assert gradcheck(lambda w: WindowWeights(start, w, 4).dense(2), (values,))
