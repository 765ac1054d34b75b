"""What the LSTMN encoder of a translation model attends to while it reads a source sentence
(Cheng et al. 2016's shallow fusion), ready for attnlab.viz."""

from __future__ import annotations

import torch
from torch import nn

from attnlab.data import EOS_ID, SPECIAL_PIECES, Vocab
from attnlab.data.vocab import display_pieces
from attnlab.errors import UserError
from attnlab.models import LSTMNEncoder
from attnlab.viz import SentenceReading


@torch.no_grad()
def read_with_encoder(model: nn.Module, vocab: Vocab, sentence: str) -> SentenceReading:
    """The LSTMN encoder of a translation model (in eval mode) reading w_1 .. w_n </s>."""
    encoder = model.encoder
    if not isinstance(encoder, LSTMNEncoder):
        raise UserError("this translation model's encoder has no self-attention "
                        "(model.encoder.kind is not lstmn)")
    ids = vocab.encode(sentence)
    if not ids:
        raise UserError(f"nothing to read: the sentence {sentence!r} is empty")
    device = next(model.parameters()).device
    src = torch.tensor([[*ids, EOS_ID]], device=device)  # as collate does
    weights = encoder.read(src, torch.ones_like(src, dtype=torch.bool)).weights  # (L, 1, S, S)
    tokens = [*display_pieces(vocab, sentence), SPECIAL_PIECES[EOS_ID]]
    return SentenceReading(tokens, weights[:, 0].cpu().numpy())
