"""Position encodings added to a Transformer's token embeddings (Vaswani et al. 2017, sec. 3.5).

    positions(first, length, like) -> (length, D), the encodings of positions
    first..first+length-1 in the dtype and on the device of `like`

`first` lets a decoder that runs step by step ask for its next position alone. To add a kind:
one class and one line in POSITIONS.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn


class SinusoidalPositions(nn.Module):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D))
    (Vaswani et al. 2017, sec. 3.5): no parameters, any length."""

    def __init__(self, model_dim: int):
        super().__init__()
        self.model_dim = model_dim

    def forward(self, first: int, length: int, like: Tensor) -> Tensor:
        # float64 angles (exact at large positions), then like's dtype
        wide, device = torch.float64, like.device
        position = torch.arange(first, first + length, dtype=wide, device=device).unsqueeze(1)
        pairs = torch.arange(0, self.model_dim, 2, dtype=wide, device=device)  # 2i
        angle = position * torch.exp(-math.log(10000.0) * pairs / self.model_dim)  # (T, D/2)
        encoding = torch.zeros(length, self.model_dim, dtype=wide, device=device)
        encoding[:, 0::2] = torch.sin(angle)
        encoding[:, 1::2] = torch.cos(angle[:, : self.model_dim // 2])
        return encoding.to(like.dtype)


class LearnedPositions(nn.Module):
    """One learned vector per position (Gehring et al. 2017; Vaswani et al. 2017 found it as
    good, sec. 6.2), for at most `max_len` positions."""

    def __init__(self, model_dim: int, max_len: int):
        super().__init__()
        self.table = nn.Embedding(max_len, model_dim)
        self.max_len = max_len

    def forward(self, first: int, length: int, like: Tensor) -> Tensor:
        if first + length > self.max_len:
            raise ValueError(f"learned positions: position {first + length - 1} is beyond the "
                             f"{self.max_len} this model learned (raise data.max_len, or use "
                             f"sinusoidal positions)")
        weight: Tensor = self.table.weight[first : first + length]  # (T, D)
        return weight.to(like.dtype)


# name -> (model_dim, max_len) -> module; max_len is what a learned table is sized for
POSITIONS: dict[str, Callable[[int, int], nn.Module]] = {
    "sinusoidal": lambda dim, max_len: SinusoidalPositions(dim),
    "learned": LearnedPositions,
}
