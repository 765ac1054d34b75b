"""The specification in code: slow, obvious loops written straight from the equations page of
the docs (docs/equations.md).

Nothing here is vectorised beyond one query-key pair, and nothing is shared with the fast modules
except their parameter tensors. The fast code is tested against these functions. Each function
reads a built module's parameters and loops over batch, query and key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from attnlab.attention import scores
from attnlab.attention.hard import HardAttention
from attnlab.attention.local import LocalAttention
from attnlab.attention.scores import COSINE_EPS, Cosine, Location, Score


def dot(q: Tensor, k: Tensor) -> Tensor:
    """q^T k."""
    return q @ k


def scaled_dot(q: Tensor, k: Tensor) -> Tensor:
    """q^T k / sqrt(d_k)."""
    return (q @ k) / math.sqrt(k.shape[0])


def general(q: Tensor, k: Tensor, w_a: Tensor) -> Tensor:
    """q^T W_a k."""
    return q @ (w_a @ k)


def additive(q: Tensor, k: Tensor, w_a: Tensor, u_a: Tensor, v_a: Tensor) -> Tensor:
    """v_a^T tanh(W_a q + U_a k)."""
    return v_a @ torch.tanh(w_a @ q + u_a @ k)


def cosine(q: Tensor, k: Tensor, beta: Tensor | float) -> Tensor:
    """beta * q.k / (|q| |k|), each norm floored at a tiny epsilon."""
    norm_q = torch.clamp(torch.sqrt(q @ q), min=COSINE_EPS)
    norm_k = torch.clamp(torch.sqrt(k @ k), min=COSINE_EPS)
    return beta * (q @ k) / (norm_q * norm_k)


def key_strength(score: Cosine, q: Tensor) -> Tensor | float:
    """beta = fixed sharpness, or 1 + softplus(w^T q + b) = 1 + log(1 + exp(w^T q + b))."""
    if score.strength is None:
        assert score.sharpness is not None  # one of the two is set
        return score.sharpness
    z = score.strength.weight[0] @ q + score.strength.bias[0]
    return 1 + torch.log1p(torch.exp(z))


# One line per score class: its score(q, k) for one query (Dq,) and one key (Dk,), from the
# module's parameters. (Location has no pair form: see `alignment`.) Each line is handed an
# instance of its own class, which a dict's type cannot say: hence Any.
PAIR_SCORES: dict[type[Score], Callable[[Any, Tensor, Tensor], Tensor]] = {
    scores.Dot: lambda score, q, k: dot(q, k),
    scores.ScaledDot: lambda score, q, k: scaled_dot(q, k),
    scores.General: lambda score, q, k: general(q, k, score.key_proj.weight),
    scores.Additive: lambda score, q, k: additive(q, k, score.query_proj.weight,
                                                  score.key_proj.weight, score.v.weight[0]),
    scores.Cosine: lambda score, q, k: cosine(q, k, key_strength(score, q)),
}


def pair_score(score: Score, q: Tensor, k: Tensor) -> Tensor:
    """score(q, k) for one query (Dq,) and one key (Dk,), from the module's parameters."""
    if type(score) not in PAIR_SCORES:
        raise TypeError(f"no reference for {type(score).__name__}")
    return PAIR_SCORES[type(score)](score, q, k)


def softmax_over(by_position: dict[int, Tensor]) -> dict[int, Tensor]:
    """exp(s_i) / sum_j exp(s_j) over the given positions only (max subtracted for stability)."""
    if not by_position:
        return {}
    top = max(float(s.detach()) for s in by_position.values())
    exps = {i: torch.exp(s - top) for i, s in by_position.items()}
    total = sum(exps.values())
    return {i: e / total for i, e in exps.items()}


def alignment(score: Score, q: Tensor, keys: Tensor, positions: list[int]) -> dict[int, Tensor]:
    """alpha over `positions` (the real keys a query may see), q (Dq,), keys (Tk, Dk)."""
    if isinstance(score, Location):
        # softmax(W_a q) over all max_len positions, cut to `positions`, renormalised.
        logits = score.position_logits.weight @ q
        full = softmax_over({i: logits[i] for i in range(score.max_len)})
        total = sum((full[i] for i in positions), torch.zeros((), dtype=q.dtype))
        return {i: full[i] / total for i in positions}
    return softmax_over({i: pair_score(score, q, keys[i]) for i in positions})


def attend_loop(
    score: Score, query: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Global attention: query (B, Tq, Dq), keys (B, Tk, Dk), values (B, Tk, Dv),
    mask (B, Tk) or (B, Tq, Tk) bool -> context (B, Tq, Dv), weights (B, Tq, Tk)."""
    batch, queries, num_keys = query.shape[0], query.shape[1], keys.shape[1]
    context = torch.zeros(batch, queries, values.shape[-1], dtype=values.dtype)
    weights = torch.zeros(batch, queries, num_keys, dtype=query.dtype)
    for b in range(batch):
        for t in range(queries):
            visible = [i for i in range(num_keys) if _real(mask, b, t, i)]
            for i, w in alignment(score, query[b, t], keys[b], visible).items():
                weights[b, t, i] = w
                context[b, t] += w * values[b, i]
    return context, weights


def local_loop(
    local: LocalAttention,
    query: Tensor,
    keys: Tensor,
    values: Tensor,
    mask: Tensor | None = None,
    offset: int = 0,
) -> tuple[Tensor, Tensor]:
    """Local-m / local-p (Luong et al. 2015, eq. 9-10), shapes as `attend_loop` (mask (B, Tk))."""
    batch, queries, num_keys = query.shape[0], query.shape[1], keys.shape[1]
    width = local.window
    context = torch.zeros(batch, queries, values.shape[-1], dtype=values.dtype)
    weights = torch.zeros(batch, queries, num_keys, dtype=query.dtype)
    for b in range(batch):
        real_length = sum(1 for i in range(num_keys) if _real(mask, b, 0, i))
        for t in range(queries):
            if local.predictive:
                w_p, v_p = local.position_proj.weight, local.position_v.weight[0]
                gate = 1 / (1 + torch.exp(-(v_p @ torch.tanh(w_p @ query[b, t]))))
                p_t = max(real_length - 1, 0) * gate
            else:
                p_t = torch.tensor(float(offset + t), dtype=query.dtype)
            centre = round(float(p_t.detach()))
            window = [
                i for i in range(centre - width, centre + width + 1)
                if 0 <= i < num_keys and _real(mask, b, t, i)
            ]
            for i, w in alignment(local.score, query[b, t], keys[b], window).items():
                if local.predictive:
                    sigma = width / 2
                    w = w * torch.exp(-((i - p_t) ** 2) / (2 * sigma**2))
                weights[b, t, i] = w
                context[b, t] += w * values[b, i]
    return context, weights


def hard_distribution_loop(
    hard: HardAttention, query: Tensor, keys: Tensor, mask: Tensor | None = None
) -> Tensor:
    """The alpha hard attention samples from: the global soft weights (B, Tq, Tk)."""
    return attend_loop(hard.score, query, keys, keys, mask)[1]


def causal_loop(
    score: Score, queries: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None,
    include_self: bool = False,
) -> tuple[Tensor, Tensor]:
    """Self-attention of position t over positions i < t (i <= t with include_self), real only."""
    length = keys.shape[1]
    allowed = torch.zeros(keys.shape[0], length, length, dtype=torch.bool)
    for b in range(keys.shape[0]):
        for t in range(length):
            for i in range(length):
                earlier = i < t or (include_self and i == t)
                allowed[b, t, i] = earlier and _real(mask, b, t, i)
    return attend_loop(score, queries, keys, values, allowed)


def _real(mask: Tensor | None, b: int, t: int, i: int) -> bool:
    """Is key i real for query t of sentence b? mask is (B, Tk), (B, Tq, Tk) or None."""
    if mask is None:
        return True
    return bool(mask[b, i] if mask.dim() == 2 else mask[b, t, i])
