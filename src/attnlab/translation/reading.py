"""What the LSTMN encoder of a translation model attends to while it reads a source sentence
(Cheng et al. 2016's shallow fusion), ready for attnlab.viz."""

from __future__ import annotations

import os

import torch
from torch import nn

from attnlab.data import EOS_ID, SPECIAL_PIECES, Vocab
from attnlab.data.vocab import display_pieces
from attnlab.errors import UserError
from attnlab.models import LSTMNEncoder
from attnlab.viz import SentenceReading

from .loading import load_run


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


def read_run(run_dir: str | os.PathLike, sentence: str, checkpoint: str | None = None,
             device: str = "cpu") -> SentenceReading:
    """How a translation run's LSTMN encoder reads `sentence` (the model on `device`)."""
    run = load_run(run_dir, checkpoint, device)
    return read_with_encoder(run.model, run.vocabs.src, sentence)
