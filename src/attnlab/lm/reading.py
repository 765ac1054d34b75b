"""What an LSTMN attends to while it reads one sentence: the tokens and every step's weights.

Works for an LSTMN language model and for the LSTMN encoder of a translation model; the result
is arrays and strings, ready for attnlab.viz.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from attnlab.data import BOS_ID, EOS_ID, SPECIAL_PIECES, Vocab
from attnlab.data.vocab import WORD_START
from attnlab.errors import UserError
from attnlab.models.lstmn import LSTMNEncoder

from .corpus import collate_text


@dataclass
class SentenceReading:
    """tokens (T,) in reading order; weights (L, T, T): layer l's s^t in row t, over i < t."""

    tokens: list[str]
    weights: np.ndarray


def display_pieces(vocab: Vocab, sentence: str) -> list[str]:
    """The pieces the model reads, without sentencepiece's word-start mark (kept if alone)."""
    return [piece.removeprefix(WORD_START) or piece for piece in vocab.tokenize(sentence)]


def _encode(vocab: Vocab, sentence: str) -> list[int]:
    ids = vocab.encode(sentence)
    if not ids:
        raise UserError(f"nothing to read: the sentence {sentence!r} is empty")
    return ids


@torch.no_grad()
def read_with_language_model(model: nn.Module, vocab: Vocab, sentence: str) -> SentenceReading:
    """An LSTMN language model (in eval mode) reading <s> w_1 .. w_n."""
    batch = collate_text([_encode(vocab, sentence)]).to(next(model.parameters()).device)
    attention = model(batch.inputs, batch.mask).attention  # (L, 1, T, T) or None
    if attention is None:
        raise UserError("this language model has no self-attention (model.kind is not lstmn)")
    tokens = [SPECIAL_PIECES[BOS_ID], *display_pieces(vocab, sentence)]  # "<s>" read first
    return SentenceReading(tokens, attention[:, 0].cpu().numpy())


@torch.no_grad()
def read_with_encoder(model: nn.Module, vocab: Vocab, sentence: str) -> SentenceReading:
    """The LSTMN encoder of a translation model (in eval mode) reading w_1 .. w_n </s>."""
    encoder = model.encoder
    if not isinstance(encoder, LSTMNEncoder):
        raise UserError("this translation model's encoder has no self-attention "
                        "(model.encoder.kind is not lstmn)")
    device = next(model.parameters()).device
    src = torch.tensor([[*_encode(vocab, sentence), EOS_ID]], device=device)  # as collate does
    weights = encoder.read(src, torch.ones_like(src, dtype=torch.bool)).weights  # (L, 1, S, S)
    tokens = [*display_pieces(vocab, sentence), SPECIAL_PIECES[EOS_ID]]
    return SentenceReading(tokens, weights[:, 0].cpu().numpy())
