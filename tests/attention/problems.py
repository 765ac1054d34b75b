"""Random attention problems for property tests: shapes, masks and float64 tensors."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from attnlab.attention import SCORES

# Scores that compare q and k directly need Dq == Dk: asked of the score, never listed here.
SAME_DIM_SCORES = {name for name, cls in SCORES.items() if cls.needs_equal_dims}


@dataclass
class Problem:
    query: torch.Tensor  # (B, Tq, Dq)
    keys: torch.Tensor  # (B, Tk, Dk)
    values: torch.Tensor  # (B, Tk, Dv)
    mask: torch.Tensor  # (B, Tk) bool
    seed: int

    @property
    def dims(self) -> dict:
        return {"query_dim": self.query.shape[-1], "key_dim": self.keys.shape[-1]}


@st.composite
def problems(draw, score: str, max_keys: int = 7, full_mask: bool = False) -> Problem:
    """A batch with random sizes and a random mask (rows with no real key included)."""
    batch = draw(st.integers(1, 3))
    queries = draw(st.integers(1, 4))
    num_keys = draw(st.integers(1, max_keys))
    query_dim = draw(st.integers(1, 5))
    key_dim = query_dim if score in SAME_DIM_SCORES else draw(st.integers(1, 5))
    value_dim = draw(st.integers(1, 4))
    bits = st.booleans() if not full_mask else st.just(True)
    mask = draw(st.lists(st.lists(bits, min_size=num_keys, max_size=num_keys),
                         min_size=batch, max_size=batch))
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    return Problem(rand(batch, queries, query_dim), rand(batch, num_keys, key_dim),
                   rand(batch, num_keys, value_dim), torch.tensor(mask, dtype=torch.bool), seed)


def seeded(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """float64 module with parameters drawn from `seed` (so hypothesis examples replay exactly)."""
    gen = torch.Generator().manual_seed(seed)
    module = module.double()
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=gen, dtype=torch.float64))
    return module


ALL_SCORES = sorted(SCORES)
MAX_LEN = 8  # location scores are built for this many positions
