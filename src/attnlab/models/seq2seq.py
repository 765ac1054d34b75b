"""The encoder-decoder translation model and its training loss."""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.attention import MovingAverageBaseline, reinforce_loss

from .config import AttentionConfig
from .decoder_base import DecoderOutput
from .decoders import RecurrentDecoder
from .encoder import EncoderOutput, RNNEncoder


@dataclass
class TranslationLoss:
    """loss: the scalar to minimise (per target token); nll_sum: summed token negative
    log-likelihood (for perplexity); tokens: real target tokens."""

    loss: Tensor
    nll_sum: float
    tokens: int


class Seq2Seq(nn.Module):
    """Encoder + decoder. forward(src (B, S), src_mask (B, S), tgt_in (B, T)) -> DecoderOutput."""

    def __init__(self, encoder: RNNEncoder, decoder: RecurrentDecoder, *, pad_id: int = 0,
                 hard: AttentionConfig | None = None):
        super().__init__()
        self.encoder, self.decoder, self.pad_id = encoder, decoder, pad_id
        self.hard = hard  # the hard-attention settings, or None for soft/no attention
        self.baseline = MovingAverageBaseline() if hard is not None else None

    def encode(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        return self.encoder(src, src_mask)

    def forward(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> DecoderOutput:
        return self.decoder(tgt_in, self.encode(src, src_mask))

    def loss(self, out: DecoderOutput, tgt_out: Tensor, tgt_mask: Tensor,
             label_smoothing: float = 0.0) -> TranslationLoss:
        """The training loss of a forward pass `out` against tgt_out / tgt_mask (B, T).

        Label-smoothed cross-entropy per target token; with hard attention in training, Xu et
        al.'s REINFORCE objective (no smoothing). Kept apart from forward so a
        DistributedDataParallel wrapper sees the forward call.
        """
        logits = out.logits.transpose(1, 2)  # (B, V, T) as cross_entropy wants
        token_nll = F.cross_entropy(logits, tgt_out, reduction="none") * tgt_mask  # (B, T)
        tokens = int(tgt_mask.sum())
        nll_sum = float(token_nll.detach().sum())
        if self.hard is None or not self.training:
            smoothed = F.cross_entropy(logits, tgt_out, ignore_index=self.pad_id,
                                       label_smoothing=label_smoothing, reduction="sum")
            return TranslationLoss(smoothed / max(tokens, 1), nll_sum, tokens)
        log_likelihood = -token_nll.sum(-1)  # (B,) log p(y | s~, a)
        terms = reinforce_loss(
            log_likelihood, (out.hard_log_prob * tgt_mask).sum(-1),
            (out.hard_entropy * tgt_mask).sum(-1), self.baseline.update(log_likelihood),
            lambda_r=self.hard.lambda_r, lambda_e=self.hard.lambda_e,
        )
        # per sequence -> per token, so the likelihood part matches the soft models' scale
        return TranslationLoss(terms.loss * tgt_mask.shape[0] / max(tokens, 1), nll_sum, tokens)
