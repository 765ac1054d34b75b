"""The Long Short-Term Memory-Network (Cheng, Dong & Lapata 2016; docs/equations.md,
"Self-attention: the LSTMN").

An LSTM whose single cell is replaced by tapes of all earlier hidden states H = (h_1..h_{t-1})
and memory cells C = (c_1..c_{t-1}). At step t intra-attention reads the tapes, and the
adaptive summaries take the place of h_{t-1} and c_{t-1} in the gates:

    a_i^t = score([x_t; h~_{t-1}], h_i)  for earlier real i   (additive, the paper's choice:
            v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1}))
    s^t   = softmax(a^t);   h~_t = sum_i s_i^t h_i;   c~_t = sum_i s_i^t c_i
    [i; f; o; c^] = [sigmoid; sigmoid; sigmoid; tanh](W [h~_t; x_t] + b)
    c_t   = f * c~_t + i * c^;   h_t = o * tanh(c_t)

The first step reads an empty tape: h~_1 = c~_1 = 0. A position whose mask is False is skipped:
it is never written to the tapes, it leaves h~ unchanged, and its output and weights are zero,
so padding (anywhere) cannot change a real position. (Only the `location` score reads where a
key sits: it addresses tape entries by their index in the batch.) tests/references/lstmn.py is the
loop version the tests hold this one to.

`layer.intervention`, when set (attnlab.explain.self_attention, for the faithfulness tests), is
the decoder's hook (attnlab.models.attention_layer) at every step t >= 1: it is given s^t as
one query's weights (B, 1, t) over the t earlier positions, their mask (B, t) and t, and returns
the weights the layer reads instead; h~_t and c~_t are recomputed from them. The fused kernel
has no such hook, so a layer with an intervention runs step by step.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.attention import Attention, score_class
from attnlab.attention.scores import Additive

from .attention_layer import Intervention
from .encoder import EncoderOutput
from .lstmn_fused import FusedAdditiveLSTMN
from .rnn import State

ScoreOptions = dict[str, int | float | None]  # a score's other sizes (ScoreDims' fields)


@dataclass
class LSTMNOutput:
    """outputs (B, T, H): the top layer's h_t (zero at padding); weights (L, B, T, T): layer l's
    s^t in row t, over positions < t; final: (h, c), each (L, B, H), at each sentence's last
    real position."""

    outputs: Tensor
    weights: Tensor
    final: State


def intra_attention(score: str, input_dim: int, hidden_dim: int,
                    options: ScoreOptions) -> tuple[Attention, nn.Linear | None]:
    """Attention with query [x_t; h~_{t-1}] (D + H) over keys h_i (H); `options` are the
    score's other sizes (hidden_dim, max_len, sharpness: see attnlab.attention.ScoreDims).

    Scores that compare query and key directly (dot, scaled_dot, cosine) need equal sizes: for
    them the query is first mapped to H by a learned W_q (returned; None for the others). This
    is an addition to the paper, which uses the additive score.
    """
    if score_class(score).needs_equal_dims:
        attention = Attention(score, query_dim=hidden_dim, key_dim=hidden_dim, **options)
        return attention, nn.Linear(input_dim + hidden_dim, hidden_dim, bias=False)
    return Attention(score, query_dim=input_dim + hidden_dim, key_dim=hidden_dim, **options), None


class LSTMNLayer(nn.Module):
    """One LSTMN layer. forward(inputs (B, T, D), mask (B, T) bool) ->
    (outputs (B, T, H), weights (B, T, T), (h, c) each (B, H) at the last real position).

    With the paper's additive score the layer runs as one fused autograd node
    (lstmn_fused.py); `fused = False` (or any other score) runs it step by step below. Both
    compute the same function. With `intervention` set (see the module) it runs step by
    step."""

    def __init__(self, input_dim: int, hidden_dim: int, score: str = "additive",
                 options: ScoreOptions | None = None, *, fused: bool = True):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.fused = fused
        self.input_gates = nn.Linear(input_dim, 4 * hidden_dim)  # W [.; x_t] + b, all t at once
        self.summary_gates = nn.Linear(hidden_dim, 4 * hidden_dim, bias=False)  # W [h~_t; .]
        options = options or {"hidden_dim": hidden_dim}
        self.attention, self.query_proj = intra_attention(score, input_dim, hidden_dim, options)
        self.intervention: Intervention | None = None

    def read(self, query: Tensor, tape: Tensor, projected: Tensor,
             mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Intra-attention over the tapes: query (B, D + H), tape (B, t, 2H) = [h_i; c_i],
        projected (B, t, K), mask (B, t). Returns h~ (B, H), c~ (B, H), s (B, t)."""
        if self.query_proj is not None:
            query = self.query_proj(query)
        hidden = tape[..., : self.hidden_dim]  # the keys h_i: a view, no copy
        summary, weights = self.attention(query, hidden, tape, mask, projected_keys=projected)
        if self.intervention is not None:
            # step t reads the t earlier positions: one query's weights (B, 1, t)
            weights = self.intervention(weights.unsqueeze(1), mask, tape.shape[1]).squeeze(1)
            summary = (weights.unsqueeze(1) @ tape).squeeze(1)  # as attention mixes: (B, 2H)
        h_summary, c_summary = summary.chunk(2, dim=-1)
        return h_summary, c_summary, weights

    def forward(self, inputs: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, State]:
        batch, length, _ = inputs.shape
        if length == 0:
            return inputs.new_zeros(batch, 0, self.hidden_dim), inputs.new_zeros(batch, 0, 0), \
                (inputs.new_zeros(batch, self.hidden_dim),) * 2
        score = self.attention.score
        if (self.fused and isinstance(score, Additive) and self.query_proj is None
                and self.intervention is None):
            return self.forward_fused(inputs, mask, score)
        return self.forward_stepwise(inputs, mask)

    def forward_fused(self, inputs: Tensor, mask: Tensor,
                      score: Additive) -> tuple[Tensor, Tensor, State]:
        """The additive layer as one autograd node; the input-side products for all positions
        at once here, outside it."""
        w_query = score.query_proj.weight  # (K, D + H): [W_qx | W_qh] over [x_t; h~_{t-1}]
        width = inputs.shape[-1]
        tape, weights = FusedAdditiveLSTMN.apply(  # type: ignore[no-untyped-call]  # untyped in torch
            self.input_gates(inputs),  # (B, T, 4H)
            inputs @ w_query[:, :width].t(),  # (B, T, K)
            mask, self.summary_gates.weight, w_query[:, width:], score.key_proj.weight,
            score.v.weight.squeeze(0))
        real = mask.unsqueeze(-1)  # (B, T, 1)
        hidden = tape[..., : self.hidden_dim] * real  # (B, T, H), zero at padding
        cells = tape[..., self.hidden_dim :] * real
        # The last real position: the largest index whose mask is True (0 rows if none).
        positions = torch.arange(mask.shape[1], device=mask.device)
        last = (positions * mask).argmax(dim=1)  # (B,)
        rows = torch.arange(mask.shape[0], device=mask.device)
        return hidden, weights * real, (hidden[rows, last], cells[rows, last])

    def forward_stepwise(self, inputs: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, State]:
        """The layer position by position under autograd: any score."""
        batch, length, _ = inputs.shape
        input_gates = self.input_gates(inputs)  # (B, T, 4H)
        zeros = inputs.new_zeros(batch, self.hidden_dim)
        h_summary, last_h, last_c = zeros, zeros, zeros
        # Python lists, concatenated per step: writing into a preallocated tape in place would
        # invalidate the slices earlier steps saved for backward.
        tape: list[Tensor] = []  # (B, 1, 2H) per position
        projected: list[Tensor] = []  # (B, 1, K) per position
        outputs: list[Tensor] = []
        rows: list[Tensor] = []
        for t in range(length):
            real = mask[:, t : t + 1]  # (B, 1)
            if t == 0:
                h_read, c_read, weights = zeros, zeros, inputs.new_zeros(batch, 0)
            else:
                query = torch.cat([inputs[:, t], h_summary], dim=-1)  # [x_t; h~_{t-1}]
                h_read, c_read, weights = self.read(query, torch.cat(tape, 1),
                                                    torch.cat(projected, 1), mask[:, :t])
            i, f, o, candidate = (input_gates[:, t] + self.summary_gates(h_read)).chunk(4, -1)
            c = torch.sigmoid(f) * c_read + torch.sigmoid(i) * torch.tanh(candidate)
            h = torch.sigmoid(o) * torch.tanh(c)
            # Written to the tape once, projected into the key space once.
            tape.append(torch.cat([h, c], dim=-1).unsqueeze(1))  # (B, 1, 2H)
            projected.append(self.attention.project_keys(h.unsqueeze(1)))  # (B, 1, K)
            h_summary = torch.where(real, h_read, h_summary)  # padding leaves h~ as it was
            last_h, last_c = torch.where(real, h, last_h), torch.where(real, c, last_c)
            outputs.append(h * real)
            rows.append(F.pad(weights * real, (0, length - t)))  # (B, T)
        return torch.stack(outputs, 1), torch.stack(rows, 1), (last_h, last_c)


class LSTMN(nn.Module):
    """Stacked LSTMN layers; dropout on the outputs of every layer but the top (as nn.LSTM).

    LSTMN(input_dim, hidden_dim, layers=1, dropout=0.0, score="additive", attention_dim=None,
    max_len=None, sharpness=None, fused=True): score is a key of attnlab.attention.SCORES;
    attention_dim the additive score's inner size (default: hidden_dim), max_len the positions a
    `location` score can address, sharpness cosine's fixed strength; fused=False runs the
    additive score step by step too (the slower path, kept for comparison).
    forward(inputs (B, T, D), mask (B, T) bool or None) -> LSTMNOutput.
    """

    fp32_submodules = ("layers",)  # int8 leaves them in fp32: the fused layer reads its weights

    def __init__(self, input_dim: int, hidden_dim: int, *, layers: int = 1,
                 dropout: float = 0.0, score: str = "additive", attention_dim: int | None = None,
                 max_len: int | None = None, sharpness: float | None = None,
                 fused: bool = True):
        super().__init__()
        if layers < 1:
            raise ValueError(f"LSTMN needs at least one layer, got layers={layers}")
        options = {"hidden_dim": attention_dim or hidden_dim, "max_len": max_len,
                   "sharpness": sharpness}
        self.layers = nn.ModuleList(
            LSTMNLayer(input_dim if n == 0 else hidden_dim, hidden_dim, score, options,
                       fused=fused)
            for n in range(layers))
        self.dropout = nn.Dropout(dropout)
        self.hidden_dim = hidden_dim

    def forward(self, inputs: Tensor, mask: Tensor | None = None) -> LSTMNOutput:
        if mask is None:
            mask = torch.ones(inputs.shape[:2], dtype=torch.bool, device=inputs.device)
        if mask.dtype != torch.bool or mask.shape != inputs.shape[:2]:
            raise ValueError(f"LSTMN: mask must be bool (B, T) = {tuple(inputs.shape[:2])}, "
                             f"got {mask.dtype} {tuple(mask.shape)}")
        weights, finals = [], []
        outputs = inputs
        for n, layer in enumerate(self.layers):
            if n > 0:
                outputs = self.dropout(outputs)
            outputs, layer_weights, final = layer(outputs, mask)
            weights.append(layer_weights)
            finals.append(final)
        final_h = torch.stack([h for h, _ in finals])  # (L, B, H)
        final_c = torch.stack([c for _, c in finals])
        return LSTMNOutput(outputs, torch.stack(weights), (final_h, final_c))


class LSTMNEncoder(nn.Module):
    """Embedding, dropout, then an LSTMN reading the source left to right; its hidden states are
    the annotations a decoder attends to (Cheng et al. 2016, "shallow fusion").

    forward(src (B, S), src_mask (B, S)) -> EncoderOutput with summary (B, H) the top layer's
    state at the last real token; read(src, src_mask) -> LSTMNOutput, for the figure.
    """

    directions = 1

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int, *, layers: int = 1,
                 dropout: float = 0.0, score: str = "additive", pad_id: int = 0,
                 attention_dim: int | None = None, max_len: int | None = None,
                 sharpness: float | None = None):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.lstmn = LSTMN(embedding_dim, hidden_dim, layers=layers, dropout=dropout,
                           score=score, attention_dim=attention_dim, max_len=max_len,
                           sharpness=sharpness)
        self.output_dim = hidden_dim

    def read(self, src: Tensor, src_mask: Tensor) -> LSTMNOutput:
        out: LSTMNOutput = self.lstmn(self.dropout(self.embedding(src)), src_mask)
        return out

    def forward(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        out = self.read(src, src_mask)
        summary = out.final[0][-1]  # (B, H): top layer, last real token
        return EncoderOutput(self.dropout(out.outputs), src_mask, out.final, summary)
