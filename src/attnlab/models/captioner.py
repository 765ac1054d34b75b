"""Show, Attend and Tell (Xu et al. 2015): CNN annotations + an attending LSTM decoder.

    h_0, c_0   = tanh(f_init_h(mean_i a_i)), tanh(f_init_c(mean_i a_i))          (sec. 3.1.2)
    alpha_t    = softmax_i score(h_{t-1}, a_i)                                     (eq. 4-5)
    z_t        = beta_t * phi(alpha_t, a),  beta_t = sigmoid(f_beta(h_{t-1}))      (sec. 4.2.1)
    h_t, c_t   = LSTM([E y_{t-1}; z_t], (h_{t-1}, c_{t-1}))                        (eq. 1-3)
    p(y_t)     ∝ exp(L_o(E y_{t-1} + L_h h_t + L_z z_t))                           (eq. 7)

phi is the soft expectation sum_i alpha_ti a_i, or for hard attention a sampled a_{s_t}
(`HardAttention`, trained with REINFORCE). The decoder offers the translation decoders'
interface (start / step / DecoderState.reorder), so `attnlab.decode.beam_search` runs on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.attention import (
    AttentionOutput,
    MovingAverageBaseline,
    ReinforceWeights,
    as_dense,
    sequence_reinforce_loss,
)

from .attention_layer import AttentionLayer
from .decoder_base import DecoderState
from .image_encoder import ImageEncoder


@dataclass
class CaptionOutput:
    """logits (B, T, V); attention (B, T, L) the alphas; hard_log_prob / hard_entropy (B, T):
    log p(s~_t) and H[alpha_t] with hard attention, else None."""

    logits: Tensor
    attention: Tensor
    hard_log_prob: Tensor | None = None
    hard_entropy: Tensor | None = None


@dataclass
class CaptionLoss:
    """loss: the scalar to minimise (per target token); nll_sum: summed token NLL; tokens:
    real target tokens; penalty: the batch's mean doubly stochastic term (0 when unused)."""

    loss: Tensor
    nll_sum: Tensor  # detached, on the model's device
    tokens: int
    penalty: float = 0.0


def doubly_stochastic_penalty(weights: Tensor, mask: Tensor) -> Tensor:
    """sum_i (1 - sum_t alpha_ti)^2 per caption, over its real steps (Xu et al. eq. 14).

    weights (B, T, L); mask (B, T) bool. Returns (B,).
    """
    attended = (weights * mask.unsqueeze(-1)).sum(1)  # (B, L): total attention per location
    return ((1.0 - attended) ** 2).sum(-1)


class ShowAttendTellDecoder(nn.Module):
    """The LSTM decoder of Xu et al. 2015 (equations in the module docstring).

    start(annotations (B, L, D)) -> DecoderState; step(tokens (B,), state) -> (logits (B, V),
    alpha (B, L), state); forward(tgt_in (B, T), annotations) -> CaptionOutput.
    """

    fp32_submodules = ("gate",)  # one output (beta_t): nothing for int8 to speed up

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int,
                 annotation_dim: int, attention: AttentionLayer, *, gate: bool = True,
                 dropout: float = 0.0, pad_id: int = 0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)  # E
        self.init_hidden = nn.Linear(annotation_dim, hidden_dim)  # f_init_h
        self.init_cell = nn.Linear(annotation_dim, hidden_dim)  # f_init_c
        self.attention = attention
        self.gate = nn.Linear(hidden_dim, 1) if gate else None  # f_beta
        self.cell = nn.LSTMCell(embedding_dim + annotation_dim, hidden_dim)
        self.out_hidden = nn.Linear(hidden_dim, embedding_dim)  # L_h
        self.out_context = nn.Linear(annotation_dim, embedding_dim, bias=False)  # L_z
        self.out = nn.Linear(embedding_dim, vocab_size)  # L_o
        self.dropout = nn.Dropout(dropout)

    def start(self, annotations: Tensor, mask: Tensor | None = None) -> DecoderState:
        """The initial state and the memory of the keys, projected once per image;
        annotations (B, L, D), mask (B, L) the locations to attend to (default: all)."""
        mean = annotations.mean(1)  # (B, D)
        hidden, cell = torch.tanh(self.init_hidden(mean)), torch.tanh(self.init_cell(mean))
        if mask is None:
            mask = annotations.new_ones(annotations.shape[:2], dtype=torch.bool)  # (B, L)
        memory = self.attention.memory(annotations, mask)
        # rnn as (layers, B, n) tensors, the layout DecoderState.reorder expects
        return DecoderState((hidden.unsqueeze(0), cell.unsqueeze(0)), None, memory)

    def run(self, embedded: Tensor,
            state: DecoderState) -> tuple[Tensor, AttentionOutput, DecoderState]:
        """embedded (B, E) y_{t-1} -> features (B, E), AttentionOutput ((B, ...) fields), state."""
        hidden, cell = state.rnn[0][0], state.rnn[1][0]  # h_{t-1}, c_{t-1}: (B, n)
        attended: AttentionOutput = self.attention(hidden, state.memory, state.step)  # alpha_t
        context = attended.context  # (B, D)
        if self.gate is not None:
            context = torch.sigmoid(self.gate(hidden)) * context  # z_t = beta_t * phi
        hidden, cell = self.cell(torch.cat([embedded, context], -1), (hidden, cell))
        features = embedded + self.out_hidden(hidden) + self.out_context(context)  # (B, E)
        new_state = DecoderState((hidden.unsqueeze(0), cell.unsqueeze(0)), None, state.memory,
                                 state.step + 1)
        return features, attended, new_state

    def step(self, tokens: Tensor,
             state: DecoderState) -> tuple[Tensor, Tensor, DecoderState]:
        """One step for search: tokens (B,) -> logits (B, V), alpha (B, L), new state."""
        features, attended, state = self.run(self.embedding(tokens), state)
        logits: Tensor = self.out(self.dropout(features))
        return logits, as_dense(attended.weights), state  # (B, L): global or hard, dense

    def forward(self, tgt_in: Tensor, annotations: Tensor) -> CaptionOutput:
        """Teacher forcing: tgt_in (B, T) = BOS + caption -> CaptionOutput."""
        state = self.start(annotations)
        embedded = self.embedding(tgt_in)  # (B, T, E)
        features, steps = [], []
        for t in range(tgt_in.shape[1]):
            feature, attended, state = self.run(embedded[:, t], state)
            features.append(feature.unsqueeze(1))
            steps.append(attended)
        attention = AttentionOutput.stack(steps)  # (B, T, ...) fields
        logits = self.out(self.dropout(torch.cat(features, 1)))  # (B, T, V)
        sample = attention.sample
        return CaptionOutput(logits, as_dense(attention.weights),
                             None if sample is None else sample.log_prob,
                             None if sample is None else sample.entropy)


class Captioner(nn.Module):
    """Encoder + decoder. forward(images (B, 3, H, W), tgt_in (B, T)) -> CaptionOutput.

    With `reinforce` (hard attention), training uses the REINFORCE objective with a
    moving-average baseline; otherwise the NLL plus `doubly_stochastic` times the penalty.
    """

    outputs_log_probs = False  # step returns logits (attnlab.decode.Searchable)

    def __init__(self, encoder: ImageEncoder, decoder: ShowAttendTellDecoder, *,
                 reinforce: ReinforceWeights | None = None, doubly_stochastic: float = 0.0):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.reinforce, self.doubly_stochastic = reinforce, doubly_stochastic
        self.baseline = MovingAverageBaseline() if reinforce is not None else None

    def grid_size(self, height: int, width: int) -> tuple[int, int]:
        """(h, w) of the annotation grid for H x W images; L = h * w."""
        return self.encoder.grid_size(height, width)

    def encode(self, images: Tensor) -> Tensor:
        """images (B, 3, H, W) -> annotations (B, L, D)."""
        annotations: Tensor = self.encoder(images)
        return annotations

    def start(self, images: Tensor, mask: Tensor) -> DecoderState:
        """Encode once and start decoding (attnlab.decode.Searchable); mask (B, L) the
        annotation locations to attend to."""
        return self.decoder.start(self.encode(images), mask)

    def step(self, tokens: Tensor, state: DecoderState
             ) -> tuple[Tensor, Tensor, DecoderState]:
        """One word for search: tokens (B,) -> logits (B, V), alpha (B, L), state."""
        return self.decoder.step(tokens, state)

    def forward(self, images: Tensor, tgt_in: Tensor) -> CaptionOutput:
        out: CaptionOutput = self.decoder(tgt_in, self.encode(images))
        return out

    def loss(self, out: CaptionOutput, tgt_out: Tensor, tgt_mask: Tensor) -> CaptionLoss:
        """The training loss of `out` against tgt_out / tgt_mask (B, T), per target token.

        Per caption: -log p(y|a) (+ lambda * penalty), or Xu et al.'s REINFORCE objective with
        hard attention in training; averaged over captions, then scaled by B / tokens so its
        size matches a per-token NLL whatever the caption lengths.
        """
        token_nll = F.cross_entropy(out.logits.transpose(1, 2), tgt_out, reduction="none")
        token_nll = token_nll * tgt_mask  # (B, T)
        tokens = int(tgt_mask.sum())
        penalty = torch.zeros(())
        if self.baseline is not None and self.reinforce is not None and self.training:
            assert out.hard_log_prob is not None and out.hard_entropy is not None  # hard: set
            per_caption = sequence_reinforce_loss(
                token_nll, tgt_mask, out.hard_log_prob, out.hard_entropy, self.baseline,
                self.reinforce).loss
        else:
            per_caption = token_nll.sum(-1).mean()  # -log p(y | a) per caption
            if self.doubly_stochastic:
                penalty = doubly_stochastic_penalty(out.attention, tgt_mask).mean()
                per_caption = per_caption + self.doubly_stochastic * penalty
        loss = per_caption * tgt_mask.shape[0] / max(tokens, 1)
        nll_sum = token_nll.detach().sum()  # stays on the device: read at log time
        return CaptionLoss(loss, nll_sum, tokens, float(penalty.detach()))


def set_hard_decoding(model: Captioner, mode: Literal["expectation", "argmax"]) -> None:
    """How a hard-attention model reads in eval mode: "expectation" (the soft expectation, as
    in Xu et al.'s code) or "argmax" (only the most likely location). Soft models ignore it."""
    model.decoder.attention.mechanism.set_eval_mode(mode)
