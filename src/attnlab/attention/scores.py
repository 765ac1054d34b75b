"""The score functions of the attention family (the equations page of the docs, "The score
functions": docs/equations.md).

Every score is split in two so the key side is computed once per source sentence:

    projected = score.project_keys(keys)       # (B, Tk, Dk) -> (B, Tk, H), once per sentence
    scores = score(query, projected)           # (B, Tq, Dq) -> (B, Tq, Tk), every step
    scores = score.window(query, projected, positions)   # only the keys at positions (B, Tq, W)

A decoder keeps `projected` (and reorders it with its beams); it is returned, never stored on the
module. A score declares what it needs (`needs_equal_dims`, `needs_max_len`) so that callers ask
before building instead of catching an error, and what it allows (`windows_are_dots`: local
attention reads its windows in place). To add a score: write one class (with `from_dims`),
add one line to `SCORES` and one to `PAIR_SCORES` of tests/references/attention.py.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import ClassVar

import torch.nn.functional as F
from torch import Tensor, nn

from .ops import add_tanh, gather_rows

COSINE_EPS = 1e-8  # guards the norm of an all-zero vector in the cosine score


@dataclass(frozen=True)
class ScoreDims:
    """The numbers a score may need; each score reads only its own."""

    query_dim: int
    key_dim: int
    hidden_dim: int | None = None  # additive: inner size (default query_dim)
    max_len: int | None = None  # location: number of source positions it can address
    sharpness: float | None = None  # cosine: fixed key strength beta (None = learned from query)


class Score(nn.Module):
    """score(q, k) for every query-key pair, with the key side computed once."""

    name = "score"
    needs_equal_dims: ClassVar[bool] = False  # compares q and k directly: query_dim == key_dim
    needs_max_len: ClassVar[bool] = False  # addresses source positions: needs max_len
    # q'^T k' of projected query and keys: a window's scores can be read out of Q' K'^T in
    # place (attention.windows.window_dots), without gathering the window's keys
    windows_are_dots: ClassVar[bool] = False
    # submodules int8 inference must leave in fp32 (attnlab.models.quantize asks every module)
    fp32_submodules: ClassVar[tuple[str, ...]] = ()
    # the key positions it can address (location: its max_len); None = any number
    max_len: int | None = None

    def __init__(self, query_dim: int, key_dim: int):
        super().__init__()
        if self.needs_equal_dims and query_dim != key_dim:
            raise ValueError(unmet_need(type(self), ScoreDims(query_dim, key_dim)))
        self.query_dim, self.key_dim = query_dim, key_dim

    @classmethod
    def from_dims(cls, dims: ScoreDims) -> Score:
        """Build from the numbers a score may need; each score reads only its own."""
        return cls(dims.query_dim, dims.key_dim)

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

    windows_are_dots = True

    def compare(self, query: Tensor, keys: Tensor) -> Tensor:
        # (B, Tq, W, H) @ (B, Tq, H, 1): no (B, Tq, W, H) temporary
        return (keys @ query.transpose(-1, -2)).squeeze(-1)

    def forward(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        # (B, Tq, H) @ (B, H, Tk): one GEMM instead of a broadcast product.
        return self.project_query(query) @ projected_keys.transpose(1, 2)


class Dot(DotProduct):
    """q^T k (Luong et al. 2015, eq. 8 'dot')."""

    name = "dot"
    needs_equal_dims = True


class ScaledDot(DotProduct):
    """q^T k / sqrt(d_k) (Vaswani et al. 2017, eq. 1). The query is scaled, not the scores."""

    name = "scaled_dot"
    needs_equal_dims = True

    def __init__(self, query_dim: int, key_dim: int):
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
        projected: Tensor = self.key_proj(keys)  # (B, Tk, Dq)
        return projected


class Cosine(DotProduct):
    """beta * cos(q, k) (Graves et al. 2014, NTM content addressing, eq. 5-6).

    The key strength beta >= 1 is either fixed (`sharpness`) or read from the query,
    beta = 1 + softplus(w^T q + b) (the NTM's "oneplus").
    """

    name = "cosine"
    needs_equal_dims = True
    fp32_submodules = ("strength",)  # one output (beta): nothing for int8 to speed up

    def __init__(self, query_dim: int, key_dim: int, sharpness: float | None = None):
        if sharpness is not None and not sharpness > 0:
            raise ValueError(f"cosine score: sharpness must be > 0, got {sharpness}")
        super().__init__(query_dim, key_dim)
        self.sharpness = sharpness
        self.strength = nn.Linear(query_dim, 1) if sharpness is None else None

    @classmethod
    def from_dims(cls, dims: ScoreDims) -> Cosine:
        return cls(dims.query_dim, dims.key_dim, dims.sharpness)

    def key_strength(self, query: Tensor) -> Tensor:
        """beta for each query: (B, Tq, Dq) -> (B, Tq, 1)."""
        if self.strength is None:
            assert self.sharpness is not None  # one of the two is set (__init__)
            return query.new_full(query.shape[:-1] + (1,), self.sharpness)
        return 1.0 + F.softplus(self.strength(query))

    def project_keys(self, keys: Tensor) -> Tensor:
        return F.normalize(keys, dim=-1, eps=COSINE_EPS)

    def project_query(self, query: Tensor) -> Tensor:
        return self.key_strength(query) * F.normalize(query, dim=-1, eps=COSINE_EPS)


class Additive(Score):
    """v_a^T tanh(W_a q + U_a k) (Bahdanau et al. 2015, eq. 6; Luong et al. 2015 'concat')."""

    name = "additive"
    fp32_submodules = ("v",)  # `compare` reads v's weight directly

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int | None = None):
        super().__init__(query_dim, key_dim)
        hidden_dim = hidden_dim or query_dim
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)  # W_a
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=False)  # U_a, once per sentence
        self.v = nn.Linear(hidden_dim, 1, bias=False)  # v_a

    @classmethod
    def from_dims(cls, dims: ScoreDims) -> Additive:
        return cls(dims.query_dim, dims.key_dim, dims.hidden_dim)

    def project_keys(self, keys: Tensor) -> Tensor:
        projected: Tensor = self.key_proj(keys)  # (B, Tk, H)
        return projected

    def project_query(self, query: Tensor) -> Tensor:
        projected: Tensor = self.query_proj(query)  # (B, Tq, H)
        return projected

    def compare(self, query: Tensor, keys: Tensor) -> Tensor:
        hidden = add_tanh(query, keys)  # tanh(W_a q + U_a k): (B, Tq, W, H)
        # v as a (H, 1) matrix, not a vector: a matrix-vector product's backward (an outer
        # product) runs one row at a time under a backward batched over rows
        return (hidden @ self.v.weight.T).squeeze(-1)  # (B, Tq, W)


class Location(Score):
    """alpha_t = softmax(W_a q) over positions, cut to the real length (Luong et al. 2015, eq. 8).

    The keys' content is never read: only how many there are. Scores are the logits W_a q
    restricted to the first Tk positions; the masked softmax then renormalises them over the
    real ones.
    """

    name = "location"
    needs_max_len = True
    max_len: int

    def __init__(self, query_dim: int, key_dim: int, max_len: int | None):
        problem = unmet_need(Location, ScoreDims(query_dim, key_dim, max_len=max_len))
        if problem is not None or max_len is None:  # (a None max_len is a problem)
            raise ValueError(problem)
        super().__init__(query_dim, key_dim)
        self.max_len = max_len
        self.position_logits = nn.Linear(query_dim, max_len, bias=False)  # W_a

    @classmethod
    def from_dims(cls, dims: ScoreDims) -> Location:
        return cls(dims.query_dim, dims.key_dim, dims.max_len)

    def project_keys(self, keys: Tensor) -> Tensor:
        # Only the length matters: an empty feature axis keeps (B, Tk) for beams to reorder.
        if keys.shape[1] > self.max_len:
            raise ValueError(
                f"location score: {keys.shape[1]} keys but max_len={self.max_len}; "
                f"build it with a larger max_len"
            )
        return keys[..., :0]  # (B, Tk, 0)

    def forward(self, query: Tensor, projected_keys: Tensor) -> Tensor:
        logits: Tensor = self.position_logits(query)  # (B, Tq, max_len)
        return logits[..., : projected_keys.shape[1]]  # (B, Tq, Tk)

    def window(self, query: Tensor, projected_keys: Tensor, positions: Tensor) -> Tensor:
        logits: Tensor = self.position_logits(query)  # (B, Tq, max_len)
        return logits.gather(-1, positions)  # (B, Tq, W)


def max_positions(module: nn.Module) -> int | None:
    """The most key positions every score inside `module` can address (the smallest max_len of
    its `location` scores), or None when its scores take any number."""
    limits = [score.max_len for score in module.modules()
              if isinstance(score, Score) and score.max_len is not None]
    return min(limits, default=None)


SCORES: dict[str, type[Score]] = {
    "cosine": Cosine,
    "additive": Additive,
    "concat": Additive,
    "location": Location,
    "general": General,
    "dot": Dot,
    "scaled_dot": ScaledDot,
}


def score_class(name: str) -> type[Score]:
    """The class SCORES names; a ValueError naming the closest valid score otherwise."""
    if name not in SCORES:
        close = difflib.get_close_matches(str(name), list(SCORES), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(f"unknown score {name!r}; {hint}options: {', '.join(sorted(SCORES))}")
    return SCORES[name]


def unmet_need(cls: type[Score], dims: ScoreDims) -> str | None:
    """Why `cls` cannot be built for `dims` (one sentence), or None when it can."""
    if cls.needs_equal_dims and dims.query_dim != dims.key_dim:
        return (f"the {cls.name} score compares query and key directly, so it needs query_dim "
                f"== key_dim, got query_dim={dims.query_dim}, key_dim={dims.key_dim}; use "
                f"'general' or 'additive' for different sizes")
    if cls.needs_max_len and (dims.max_len is None or dims.max_len < 1):
        return (f"the {cls.name} score needs max_len (the number of source positions it can "
                f"address), got max_len={dims.max_len}")
    return None


def build_score(name: str, dims: ScoreDims) -> Score:
    """The score called `name` in SCORES, built for `dims` (ValueError naming what is off)."""
    cls = score_class(name)
    problem = unmet_need(cls, dims)
    if problem is not None:
        raise ValueError(problem.replace(f"the {cls.name} score", f"the {name} score", 1))
    score = cls.from_dims(dims)
    score.name = name  # error messages use the name the user chose ("concat", not "additive")
    return score
