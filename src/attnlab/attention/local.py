"""Local attention: score only a window of 2D+1 source positions (Luong et al. 2015, sec. 3.2).

local-m (monotonic): the window of the t-th query is centred on p_t = offset + t.
local-p (predictive): p_t = S * sigmoid(v_p^T tanh(W_p q_t)), S = real source length - 1
(eq. 9), and the in-window softmax is multiplied by exp(-(s - p_t)^2 / (2 sigma^2)),
sigma = D / 2 (eq. 10). As in the paper, local-p weights are *not* renormalised after the
Gaussian, so they sum to at most 1.

Keys are projected once for all queries; each query then reads only its own window of projected
keys and values, so the cost grows with Tq * (2D + 1), not Tq * Tk. Scores that declare
`windows_are_dots` (dot, scaled_dot, general, cosine) and the context read the window rows in
place (`windows`); the other scores gather them. A source at most `dense_up_to` windows long
(Multi30k's sentences against D = 10) is cheaper scored whole, as global attention does, with
everything outside the window masked: the same weights, without the window bookkeeping.
`attend` returns dense (B, Tq, Tk) weights; `attend_compact`, what decoders call, returns the
same numbers as WindowWeights (start (B, Tq), weights (B, Tq, 2D + 1)) by either route.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .base import AttentionOutput, Mechanism, Position, resolve_score
from .core import masked_softmax
from .ops import fast_tanh
from .scores import Score
from .window_weights import WindowWeights, as_dense
from .windows import window_dots, window_sums


@dataclass
class WindowedAttention:
    """Local attention in window form (what `forward` scatters into a dense (B, Tq, Tk) matrix).

    context (B, Tq, Dv); weights (B, Tq, W) with W = 2D + 1; positions (B, Tq, W) the source index
    of each window slot (clamped into [0, Tk); slots outside the sentence have weight 0);
    centres (B, Tq) the real-valued p_t.
    """

    context: Tensor
    weights: Tensor
    positions: Tensor
    centres: Tensor

    def dense_weights(self, num_keys: int) -> Tensor:
        """(B, Tq, Tk) weights, exactly 0 outside each window."""
        batch, queries, _ = self.weights.shape
        dense = self.weights.new_zeros(batch, queries, num_keys)
        return dense.scatter_add_(-1, self.positions, self.weights)  # in place: no 2nd copy

    def window_weights(self, num_keys: int) -> WindowWeights:
        """The weights as WindowWeights over num_keys positions: start = round(p_t) - D."""
        half = (self.weights.shape[-1] - 1) // 2
        start = self.centres.detach().round().long() - half
        return WindowWeights(start, self.weights, num_keys)


class LocalAttention(Mechanism):
    """Luong's local-m (`predictive=False`) and local-p (`predictive=True`) attention.

    LocalAttention(score, window=D, predictive=) with a built Score, or with a SCORES name and
    its sizes (query_dim=, key_dim=, ...). forward(query, keys, values=None, mask=None, offset=0)
    -> (context, weights) with the shapes of `Attention`; weights are exactly 0 outside
    [round(p_t) - window, round(p_t) + window] and on padding. `offset` (int or (B,) tensor) is
    the source position of the first query for local-m: a decoder at step t passes offset=t with
    a one-step query (`attend(..., first_step=t)` is the same).
    """

    score: Score
    local = True
    fp32_submodules = ("position_v",)  # one output (p_t's gate): nothing for int8 to speed up
    chunk_elements = 1 << 22  # gathered window elements per chunk of queries (16 MiB in fp32)
    dense_up_to = 3  # sources of at most 3 windows (3 (2D + 1) keys) are scored whole

    def __init__(self, score: Score | str, *, window: int | None, predictive: bool,
                 position_hidden: int | None = None, **dims: int | float | None):
        super().__init__()
        kind = "local-p" if predictive else "local-m"
        if not isinstance(window, int) or window < (1 if predictive else 0):
            raise ValueError(
                f"{kind} attention needs an integer window half-width D >= "
                f"{1 if predictive else 0} (sigma = D/2), got window={window!r}"
            )
        self.score = resolve_score(score, dims)
        self.window, self.predictive, self.kind = window, predictive, kind
        if predictive:
            query_dim = self.score.query_dim
            hidden = position_hidden or query_dim
            self.position_proj = nn.Linear(query_dim, hidden, bias=False)  # W_p
            self.position_v = nn.Linear(hidden, 1, bias=False)  # v_p

    @property
    def who(self) -> str:
        return f"LocalAttention({self.score.name!r}, {self.kind})"

    def centres(self, query: Tensor, lengths: Tensor, offset: int | Tensor) -> Tensor:
        """p_t for each query: query (B, Tq, Dq), lengths (B, 1 or Tq) real keys -> (B, Tq)."""
        batch, queries, _ = query.shape
        if self.predictive:
            hidden = fast_tanh(self.position_proj(query))  # tanh(W_p h_t)
            gate = torch.sigmoid(self.position_v(hidden))
            return (lengths - 1).clamp(min=0).to(query.dtype) * gate.squeeze(-1)
        steps = torch.arange(queries, device=query.device, dtype=query.dtype)
        offset = torch.as_tensor(offset, device=query.device, dtype=query.dtype).reshape(-1, 1)
        return (offset + steps).expand(batch, queries)

    def _centres(self, query: Tensor, key_mask: Tensor | None, num_keys: int,
                 offset: int | Tensor) -> Tensor:
        """p_t (B, Tq) for queries over num_keys keys, key_mask (B, 1|Tq, Tk) or None."""
        lengths = (key_mask.sum(-1) if key_mask is not None
                   else query.new_full((query.shape[0], 1), num_keys))
        return self.centres(query, lengths, offset)

    def _gaussian(self, positions: Tensor, centres: Tensor) -> Tensor:
        """local-p's exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D/2 (eq. 10): positions broadcast
        against centres (B, Tq) with a trailing key axis."""
        sigma = self.window / 2
        return torch.exp(-((positions - centres.unsqueeze(-1)) ** 2) / (2 * sigma**2))

    def _short(self, num_keys: int) -> bool:
        """Is a source of num_keys positions scored whole (see the module docstring)?"""
        return num_keys <= self.dense_up_to * (2 * self.window + 1)

    def attend_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                        key_mask: Tensor | None, projected_keys: Tensor,
                        call: Position) -> AttentionOutput:
        if self._short(keys.shape[1]):
            return self._dense(query, values, key_mask, projected_keys, call.first_step)[0]
        local = self._windows(query, values, key_mask, projected_keys, call.first_step)
        return AttentionOutput(local.context, local.dense_weights(keys.shape[1]))

    def compact_sequence(self, query: Tensor, keys: Tensor, values: Tensor,
                         key_mask: Tensor | None, projected_keys: Tensor,
                         call: Position) -> AttentionOutput:
        """WindowWeights (start (B, Tq), weights (B, Tq, W)) by either route, the same numbers
        as `attend_sequence`'s dense weights: a short source's are read out of its (B, Tq, Tk)
        scores (at most 3 windows long), a long source's windows are never scattered."""
        if self._short(keys.shape[1]):
            out, centres = self._dense(query, values, key_mask, projected_keys, call.first_step)
            start = centres.detach().round().long() - self.window  # (B, Tq)
            windows = WindowWeights.from_dense(as_dense(out.weights), start, 2 * self.window + 1)
            return AttentionOutput(out.context, windows)
        local = self._windows(query, values, key_mask, projected_keys, call.first_step)
        return AttentionOutput(local.context, local.window_weights(keys.shape[1]))

    def _dense(self, query: Tensor, values: Tensor, key_mask: Tensor | None,
               projected_keys: Tensor, offset: int | Tensor) -> tuple[AttentionOutput, Tensor]:
        """Eq. 9-10 over the whole source, masked to the windows: the weights `_windows` gives,
        scattered, and the centres p_t (B, Tq). query (B, Tq, Dq), values (B, Tk, Dv),
        key_mask (B, 1|Tq, Tk) or None."""
        num_keys = values.shape[1]
        centres = self._centres(query, key_mask, num_keys, offset)  # (B, Tq) real-valued p_t
        source = torch.arange(num_keys, device=query.device)  # (Tk,)
        inside = (source - centres.detach().round().long().unsqueeze(-1)).abs() <= self.window
        valid = inside if key_mask is None else inside & key_mask  # (B, Tq, Tk)
        weights = masked_softmax(self.score(query, projected_keys), valid)  # (B, Tq, Tk)
        if self.predictive:
            weights = weights * self._gaussian(source, centres)
        return AttentionOutput(weights @ values, weights), centres  # (B, Tq, Dv), (B, Tq, Tk)

    def attend_window(self, query: Tensor, keys: Tensor, values: Tensor | None = None,
                      mask: Tensor | None = None, offset: int | Tensor = 0, *,
                      projected_keys: Tensor | None = None) -> WindowedAttention:
        """Local attention without the dense matrix; query (B, Tq, Dq). See `WindowedAttention`."""
        values, key_mask, projected_keys = self.checked(query, keys, values, mask, projected_keys)
        return self._windows(query, values, key_mask, projected_keys, offset)

    def _windows(self, query: Tensor, values: Tensor, key_mask: Tensor | None,
                 projected_keys: Tensor, offset: int | Tensor) -> WindowedAttention:
        """Eq. 9-10 over windows: query (B, Tq, Dq), values (B, Tk, Dv), key_mask (B, 1|Tq, Tk)
        or None, projected_keys (B, Tk, H)."""
        batch, queries, num_keys = query.shape[0], query.shape[1], values.shape[1]
        centres = self._centres(query, key_mask, num_keys, offset)  # (B, Tq) real-valued p_t
        slots = torch.arange(-self.window, self.window + 1, device=query.device)
        positions = centres.detach().round().long().unsqueeze(-1) + slots  # (B, Tq, W)
        clamped = positions.clamp(0, max(num_keys - 1, 0))
        if num_keys == 0:  # nothing to attend to: zero weights, zero context
            zeros = query.new_zeros(batch, queries, slots.numel())
            return WindowedAttention(
                values.new_zeros(batch, queries, values.shape[-1]), zeros, clamped, centres
            )
        valid = (positions >= 0) & (positions < num_keys)
        if key_mask is not None:
            valid &= key_mask.expand(batch, queries, num_keys).gather(-1, clamped)
        # Queries go in chunks so windows that a score gathers, (B, chunk, W, H), stay small;
        # dot-product scores and the context gather nothing, only (B, chunk, W) tensors.
        gathers = not self.score.windows_are_dots
        width = max(projected_keys.shape[-1] if gathers else 1, 1)
        chunk = max(1, self.chunk_elements // (batch * slots.numel() * width))
        parts = [
            self._attend_chunk(query[:, s : s + chunk], projected_keys, values,
                               positions[:, s : s + chunk], valid[:, s : s + chunk],
                               centres[:, s : s + chunk])
            for s in range(0, queries, chunk)
        ]
        if len(parts) == 1:  # one chunk (dot-product scores, or a decoder step): no copy
            context, weights = parts[0]
        else:
            context = torch.cat([part[0] for part in parts], dim=1)
            weights = torch.cat([part[1] for part in parts], dim=1)
        return WindowedAttention(context, weights, clamped, centres)

    def _attend_chunk(
        self, query: Tensor, projected_keys: Tensor, values: Tensor, positions: Tensor,
        valid: Tensor, centres: Tensor,
    ) -> tuple[Tensor, Tensor]:
        """Eq. 9-10 for a chunk of queries: query (B, C, Dq), positions/valid (B, C, W) (positions
        may lie outside the sentence, where valid is False), centres (B, C) -> context (B, C, Dv),
        weights (B, C, W)."""
        clamped = positions.clamp(0, values.shape[1] - 1)
        scores = self.window_scores(query, projected_keys, positions)  # (B, C, W)
        weights = masked_softmax(scores, valid)  # (B, C, W)
        if self.predictive:
            weights = weights * self._gaussian(positions, centres)
        return window_sums(weights, values, clamped), weights  # (B, C, Dv), (B, C, W)

    def window_scores(self, query: Tensor, projected_keys: Tensor, positions: Tensor) -> Tensor:
        """Each query against its own window only: positions (B, C, W), consecutive, possibly
        outside the sentence -> scores (B, C, W), finite there (the caller masks those slots)."""
        if self.score.windows_are_dots:  # q'^T k': sampled from Q' K'^T, no gather
            return window_dots(self.score.project_query(query), projected_keys,
                               positions[..., 0], positions.shape[-1])
        clamped = positions.clamp(0, projected_keys.shape[1] - 1)
        return self.score.window(query, projected_keys, clamped)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor | None = None,
                mask: Tensor | None = None, offset: int | Tensor = 0, *,
                projected_keys: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out = self.attend(query, keys, values, mask, projected_keys=projected_keys,
                          first_step=offset)
        return out.context, as_dense(out.weights)  # dense already: `attend` builds no windows
