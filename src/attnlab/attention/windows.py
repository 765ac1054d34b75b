"""The two window kernels of local attention, reading each query's 2D+1 rows in place.

Gathering the window copies (B, Tq, W, H) rows and then runs Tq tiny matrix products; these
kernels read the rows where they lie instead, so the window work costs about Tq * W * H
multiply-adds and no copy:

    window_dots(queries, rows, first, W)    # q_t . row_s for s in the window: sampled matmul
    window_sums(weights, rows, positions)   # sum_s w_ts row_s: a weighted embedding bag

Windows are W consecutive rows of the query's own sentence (B, Tk, H) starting at first (B, Tq);
positions (B, Tq, W) lie in [0, Tk).
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor


def flat_positions(positions: Tensor, num_rows: int) -> Tensor:
    """(B, Tq, W) per-sentence row indices -> (B * Tq, W) indices into the (B * Tk) flat rows."""
    batch, queries, width = positions.shape
    base = torch.arange(batch, device=positions.device).view(-1, 1, 1) * num_rows
    return (positions + base).reshape(batch * queries, width)


def window_dots(queries: Tensor, rows: Tensor, first: Tensor, width: int) -> Tensor:
    """q_t . row_s for s = first_t, ..., first_t + width - 1: queries (B, Tq, H), rows (B, Tk, H),
    first (B, Tq) any integers -> (B, Tq, width). Slots outside [0, Tk) hold the dot with some
    row of the sentence: finite, and for the caller to mask."""
    batch, num_queries, hidden = queries.shape
    if rows.shape[1] < width:  # a short sentence: zero rows make room for one whole window
        rows = F.pad(rows, (0, 0, 0, width - rows.shape[1]))
    span = rows.shape[1]
    slots = torch.arange(width, device=first.device)
    # Slide each window inside the sentence, so a row of the pattern names `width` distinct,
    # increasing columns; it still covers every slot of the true window that lies inside.
    start = first.clamp(0, span - width)  # (B, Tq)
    columns = flat_positions(start.unsqueeze(-1) + slots, span).reshape(-1)
    crow = torch.arange(0, columns.numel() + 1, width, device=columns.device)
    with warnings.catch_warnings():  # CSR support is marked beta; only its layout is used here
        warnings.simplefilter("ignore", UserWarning)
        pattern = torch.sparse_csr_tensor(
            crow, columns, queries.new_zeros(columns.numel()),
            (batch * num_queries, batch * span), check_invariants=False,
        )
    # Only the sampled entries of Q K^T are computed: Tq * width * H multiply-adds.
    dots: Tensor = torch.sparse.sampled_addmm(pattern, queries.reshape(batch * num_queries, hidden),
                                              rows.reshape(batch * span, hidden).T, beta=0.0)
    dots = dots.values().view(batch, num_queries, width)  # slot j = row start + j
    shift = ((first - start).unsqueeze(-1) + slots).clamp(0, width - 1)  # back to first + j
    return dots.gather(-1, shift)


def window_sums(weights: Tensor, rows: Tensor, positions: Tensor) -> Tensor:
    """sum_s w_ts row_s over each window: weights (B, Tq, W), rows (B, Tk, Dv) -> (B, Tq, Dv)."""
    batch, num_queries, width = positions.shape
    num_rows, dim = rows.shape[1], rows.shape[2]
    bags = flat_positions(positions, num_rows)  # (B Tq, W)
    sums = F.embedding_bag(bags, rows.reshape(batch * num_rows, dim),
                           per_sample_weights=weights.reshape(-1, width), mode="sum")
    return sums.view(batch, num_queries, dim)
