"""The score functions of the attention family (SPEC.md, "The score functions").

Every score is split in two so the key side is computed once per source sentence:

    projected = score.project_keys(keys)       # (B, Tk, Dk) -> (B, Tk, H), once per sentence
    scores = score(query, projected)           # (B, Tq, Dq) -> (B, Tq, Tk), every step
    scores = score.window(query, projected, positions)   # only the keys at positions (B, Tq, W)

A decoder keeps `projected` (and reorders it with its beams); it is returned, never stored on the
module. To add a score: write one class and add one line to `SCORES`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

COSINE_EPS = 1e-8  # guards the norm of an all-zero vector in the cosine score


@dataclass(frozen=True)
class ScoreDims:
    """The numbers a score may need; each score reads only its own."""

    query_dim: int
    key_dim: int
    hidden_dim: int | None = None  # additive: inner size (default query_dim)
    max_len: int | None = None  # location: number of source positions it can address
    sharpness: float | None = None  # cosine: fixed key strength beta (None = learned from query)


def gather_rows(rows: Tensor, positions: Tensor) -> Tensor:
    """Pick rows per query: rows (B, Tk, H), positions (B, Tq, W) in [0, Tk) -> (B, Tq, W, H)."""
    batch, num_rows, hidden = rows.shape
    # index_select copies whole rows; gather would read one int64 index per element.
    flat = positions + torch.arange(batch, device=positions.device).view(-1, 1, 1) * num_rows
    picked = rows.reshape(batch * num_rows, hidden).index_select(0, flat.reshape(-1))
    return picked.view(*positions.shape, hidden)


class AddTanh(torch.autograd.Function):
    """tanh(a + b), broadcasting, computed in one buffer as 2 sigmoid(2(a + b)) - 1.

    Same function, but on this CPU build torch.tanh is ~10x slower than torch.sigmoid, and the
    additive score spends most of its time here (B x Tq x Tk x H elements).
    """

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor) -> Tensor:
        out = torch.add(a, b).mul_(2).sigmoid_().mul_(2).sub_(1)
        ctx.save_for_backward(out)
        ctx.shapes = a.shape, b.shape
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor]:
        (out,) = ctx.saved_tensors
        grad = grad * (1 - out * out)  # d tanh(x) / dx = 1 - tanh(x)^2
        shape_a, shape_b = ctx.shapes
        return grad.sum_to_size(shape_a), grad.sum_to_size(shape_b)


class Score(nn.Module):
    """score(q, k) for every query-key pair, with the key side computed once."""

    name = "score"

    def __init__(self, query_dim: int, key_dim: int):
        super().__init__()
        self.query_dim, self.key_dim = query_dim, key_dim

    def project_keys(self, keys: Tensor) -> Tensor:
        """The query-independent part: keys (B, Tk, Dk) -> (B, Tk, H)."""
        return keys

    def project_query(self, query: Tensor) -> Tensor:
        """The key-independent part: query (B, Tq, Dq) -> (B, Tq, H)."""
        return query

    def compare(self, query: Tensor, keys: Tensor) -> Tensor:
        """Projected query (B, Tq, 1, H) against projected keys (B, Tq or 1, W, H) -> (B, Tq, W)."""
        raise NotImplementedError

    def forward(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        """All pairs: query (B, Tq, Dq), projected keys (B, Tk, H) -> scores (B, Tq, Tk)."""
        return self.compare(self.project_query(query).unsqueeze(2), projected_keys.unsqueeze(1))

    def window(self, query: Tensor, projected_keys: Tensor, positions: Tensor) -> Tensor:
        """Each query against its own keys: positions (B, Tq, W) -> scores (B, Tq, W)."""
        window_keys = gather_rows(projected_keys, positions)  # (B, Tq, W, H)
        return self.compare(self.project_query(query).unsqueeze(2), window_keys)

    def check_dims(self, query: Tensor | None, keys: Tensor) -> None:
        """Raise a ValueError naming the score if query (..., Dq) or keys (..., Dk) are off."""
        query_ok = query is None or query.shape[-1] == self.query_dim
        if not query_ok or keys.shape[-1] != self.key_dim:
            got = f"query {tuple(query.shape)} and " if query is not None else ""
            raise ValueError(
                f"{self.name} score was built for query_dim={self.query_dim}, "
                f"key_dim={self.key_dim} but got {got}keys {tuple(keys.shape)}"
            )


class DotProduct(Score):
    """q'^T k' for projections q', k' chosen by subclasses; all pairs in one batched matmul."""

    def compare(self, query: Tensor, keys: Tensor) -> Tensor:
        # (B, Tq, W, H) @ (B, Tq, H, 1): no (B, Tq, W, H) temporary
        return (keys @ query.transpose(-1, -2)).squeeze(-1)

    def forward(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        # (B, Tq, H) @ (B, H, Tk): one GEMM instead of a broadcast product.
        return self.project_query(query) @ projected_keys.transpose(1, 2)


def require_equal_dims(name: str, query_dim: int, key_dim: int) -> None:
    if query_dim != key_dim:
        raise ValueError(
            f"the {name} score compares query and key directly, so it needs query_dim == "
            f"key_dim, got query_dim={query_dim}, key_dim={key_dim}; use 'general' or "
            f"'additive' for different sizes"
        )


class Dot(DotProduct):
    """q^T k (Luong et al. 2015, eq. 8 'dot')."""

    name = "dot"

    def __init__(self, query_dim: int, key_dim: int):
        require_equal_dims(self.name, query_dim, key_dim)
        super().__init__(query_dim, key_dim)


class ScaledDot(DotProduct):
    """q^T k / sqrt(d_k) (Vaswani et al. 2017, eq. 1). The query is scaled, not the scores."""

    name = "scaled_dot"

    def __init__(self, query_dim: int, key_dim: int):
        require_equal_dims(self.name, query_dim, key_dim)
        super().__init__(query_dim, key_dim)
        self.scale = 1.0 / math.sqrt(key_dim)

    def project_query(self, query: Tensor) -> Tensor:
        return query * self.scale


class General(DotProduct):
    """q^T W_a k (Luong et al. 2015, eq. 8 'general'); W_a k is the once-per-sentence part."""

    name = "general"

    def __init__(self, query_dim: int, key_dim: int):
        super().__init__(query_dim, key_dim)
        self.key_proj = nn.Linear(key_dim, query_dim, bias=False)  # W_a

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys)  # (B, Tk, Dq)


class Cosine(DotProduct):
    """beta * cos(q, k) (Graves et al. 2014, NTM content addressing, eq. 5-6).

    The key strength beta >= 1 is either fixed (`sharpness`) or read from the query,
    beta = 1 + softplus(w^T q + b) (the NTM's "oneplus").
    """

    name = "cosine"

    def __init__(self, query_dim: int, key_dim: int, sharpness: float | None = None):
        require_equal_dims(self.name, query_dim, key_dim)
        if sharpness is not None and not sharpness > 0:
            raise ValueError(f"cosine score: sharpness must be > 0, got {sharpness}")
        super().__init__(query_dim, key_dim)
        self.sharpness = sharpness
        self.strength = nn.Linear(query_dim, 1) if sharpness is None else None

    def key_strength(self, query: Tensor) -> Tensor:
        """beta for each query: (B, Tq, Dq) -> (B, Tq, 1)."""
        if self.strength is None:
            return query.new_full(query.shape[:-1] + (1,), float(self.sharpness))
        return 1.0 + F.softplus(self.strength(query))

    def project_keys(self, keys: Tensor) -> Tensor:
        return F.normalize(keys, dim=-1, eps=COSINE_EPS)

    def project_query(self, query: Tensor) -> Tensor:
        return self.key_strength(query) * F.normalize(query, dim=-1, eps=COSINE_EPS)


class Additive(Score):
    """v_a^T tanh(W_a q + U_a k) (Bahdanau et al. 2015, eq. 6; Luong et al. 2015 'concat')."""

    name = "additive"

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__(query_dim, key_dim)
        hidden_dim = hidden_dim or query_dim
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)  # W_a
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=False)  # U_a, once per sentence
        self.v = nn.Linear(hidden_dim, 1, bias=False)  # v_a

    def project_keys(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys)  # (B, Tk, H)

    def project_query(self, query: Tensor) -> Tensor:
        return self.query_proj(query)  # (B, Tq, H)

    def compare(self, query: Tensor, keys: Tensor) -> Tensor:
        hidden = AddTanh.apply(query, keys)  # tanh(W_a q + U_a k): (B, Tq, W, H)
        return hidden @ self.v.weight.squeeze(0)  # (B, Tq, W)


class Location(Score):
    """alpha_t = softmax(W_a q) over positions, cut to the real length (Luong et al. 2015, eq. 9).

    The keys' content is never read: only how many there are. Scores are the logits W_a q
    restricted to the first Tk positions; the masked softmax then renormalises them over the
    real ones.
    """

    name = "location"

    def __init__(self, query_dim: int, key_dim: int, max_len: int | None):
        if max_len is None or max_len < 1:
            raise ValueError(
                f"the location score needs max_len (the number of source positions it can "
                f"address), got max_len={max_len}"
            )
        super().__init__(query_dim, key_dim)
        self.max_len = max_len
        self.position_logits = nn.Linear(query_dim, max_len, bias=False)  # W_a

    def project_keys(self, keys: Tensor) -> Tensor:
        # Only the length matters: an empty feature axis keeps (B, Tk) for beams to reorder.
        if keys.shape[1] > self.max_len:
            raise ValueError(
                f"location score: {keys.shape[1]} keys but max_len={self.max_len}; "
                f"build it with a larger max_len"
            )
        return keys[..., :0]  # (B, Tk, 0)

    def forward(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        return self.position_logits(query)[..., : projected_keys.shape[1]]  # (B, Tq, Tk)

    def window(self, query: Tensor, projected_keys: Tensor, positions: Tensor) -> Tensor:
        return self.position_logits(query).gather(-1, positions)  # (B, Tq, W)


ScoreFactory = Callable[[ScoreDims], Score]

SCORES: dict[str, ScoreFactory] = {
    "cosine": lambda d: Cosine(d.query_dim, d.key_dim, d.sharpness),
    "additive": lambda d: Additive(d.query_dim, d.key_dim, d.hidden_dim),
    "concat": lambda d: Additive(d.query_dim, d.key_dim, d.hidden_dim),
    "location": lambda d: Location(d.query_dim, d.key_dim, d.max_len),
    "general": lambda d: General(d.query_dim, d.key_dim),
    "dot": lambda d: Dot(d.query_dim, d.key_dim),
    "scaled_dot": lambda d: ScaledDot(d.query_dim, d.key_dim),
}


def build_score(name: str, dims: ScoreDims) -> Score:
    """The score called `name` in SCORES, built for `dims`."""
    if name not in SCORES:
        raise ValueError(f"unknown score {name!r}; options: {sorted(SCORES)}")
    score = SCORES[name](dims)
    score.name = name  # error messages use the name the user chose ("concat", not "additive")
    return score
