"""The encoder-decoder translation model and its training loss."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.attention import (
    MovingAverageBaseline,
    ReinforceWeights,
    Weights,
    max_positions,
    sequence_reinforce_loss,
)

from .decoder_base import DecoderOutput, DecoderState
from .decoders import RecurrentDecoder
from .encoder import EncoderOutput


@dataclass
class TranslationLoss:
    """loss: the scalar to minimise (per target token); nll_sum: summed token negative
    log-likelihood (for perplexity), a detached scalar left on the model's device (no wait for
    it in the step); tokens: real target tokens."""

    loss: Tensor
    nll_sum: Tensor
    tokens: int


class Seq2Seq(nn.Module):
    """Encoder + decoder. forward(src (B, S), src_mask (B, S), tgt_in (B, T), tgt_mask (B, T))
    -> DecoderOutput with logits (N, V) at the real target positions (training);
    all_positions(src, src_mask, tgt_in) -> logits (B, T, V) at every position."""

    outputs_log_probs = False  # step and all_positions return logits (attnlab.decode.Searchable)

    def __init__(self, encoder: nn.Module, decoder: RecurrentDecoder, *, pad_id: int = 0,
                 reinforce: ReinforceWeights | None = None):
        super().__init__()
        self.encoder, self.decoder, self.pad_id = encoder, decoder, pad_id
        self.reinforce = reinforce  # hard attention's REINFORCE weights, or None (soft/none)
        self.baseline = MovingAverageBaseline() if reinforce is not None else None

    @property
    def max_source_length(self) -> int | None:
        """The most source positions (EOS included) the model can read, or None when any
        length can be read: a `location` score (the decoder's attention, an LSTMN encoder's
        intra-attention) addresses only the positions it was built for."""
        return max_positions(self)

    def encode(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        encoded: EncoderOutput = self.encoder(src, src_mask)
        return encoded

    def start(self, src: Tensor, src_mask: Tensor) -> DecoderState:
        """Encode once and start decoding (attnlab.decode.Searchable)."""
        return self.decoder.start(self.encode(src, src_mask))

    def step(self, tokens: Tensor, state: DecoderState
             ) -> tuple[Tensor, Weights | None, DecoderState]:
        """One target step for search: tokens (B,) -> logits (B, V), weights (B, S) (local
        attention: WindowWeights), state."""
        return self.decoder.step(tokens, state)

    def forward(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor,
                tgt_mask: Tensor) -> DecoderOutput:
        """Teacher forcing with logits (N, V) for the real target positions only: what `loss`
        takes. Training calls this (under DistributedDataParallel only forward synchronises
        gradients)."""
        out: DecoderOutput = self.decoder(tgt_in, self.encode(src, src_mask), tgt_mask)
        return out

    def all_positions(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> DecoderOutput:
        """Teacher forcing with logits (B, T, V) at every target position (scoring, tests)."""
        return self.decoder.all_positions(tgt_in, self.encode(src, src_mask))

    def loss(self, out: DecoderOutput, tgt_out: Tensor, tgt_mask: Tensor,
             label_smoothing: float = 0.0) -> TranslationLoss:
        """The training loss of a forward pass `out` (logits (N, V) at tgt_mask) against
        tgt_out / tgt_mask (B, T).

        Label-smoothed cross-entropy per target token; with hard attention in training, Xu et
        al.'s REINFORCE objective (no smoothing). Kept apart from forward so a
        DistributedDataParallel wrapper sees the forward call.
        """
        log_probs = F.log_softmax(out.logits, dim=-1)  # once: the NLL and the smoothing share it
        nll = -log_probs.gather(1, tgt_out[tgt_mask].unsqueeze(1)).squeeze(1)  # (N,)
        tokens = nll.shape[0]
        nll_sum = nll.detach().sum()
        if self.reinforce is None or self.baseline is None or not self.training:
            # label smoothing as in F.cross_entropy: (1 - eps) NLL + eps * mean_c(-log p_c)
            smoothing = -log_probs.mean(-1) if label_smoothing else 0.0
            smoothed = ((1 - label_smoothing) * nll + label_smoothing * smoothing).sum()
            return TranslationLoss(smoothed / max(tokens, 1), nll_sum, tokens)
        assert out.hard_log_prob is not None and out.hard_entropy is not None  # hard: set
        token_nll = torch.zeros_like(tgt_mask, dtype=nll.dtype).masked_scatter(tgt_mask, nll)
        terms = sequence_reinforce_loss(token_nll, tgt_mask, out.hard_log_prob,
                                        out.hard_entropy, self.baseline, self.reinforce)
        # per sequence -> per token, so the likelihood part matches the soft models' scale
        return TranslationLoss(terms.loss * tgt_mask.shape[0] / max(tokens, 1), nll_sum, tokens)
