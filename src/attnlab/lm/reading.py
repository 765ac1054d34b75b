"""What an LSTMN language model attends to while it reads one sentence: the tokens and every
step's weights, ready for attnlab.viz."""

from __future__ import annotations

import torch
from torch import nn

from attnlab.data import BOS_ID, SPECIAL_PIECES, Vocab
from attnlab.data.vocab import display_pieces
from attnlab.errors import UserError
from attnlab.viz import SentenceReading

from .corpus import collate_text


def encode_sentence(vocab: Vocab, sentence: str) -> list[int]:
    """The sentence's ids; UserError when it has none."""
    ids = vocab.encode(sentence)
    if not ids:
        raise UserError(f"nothing to read: the sentence {sentence!r} is empty")
    return ids


@torch.no_grad()
def read_with_language_model(model: nn.Module, vocab: Vocab, sentence: str) -> SentenceReading:
    """An LSTMN language model (in eval mode) reading <s> w_1 .. w_n."""
    batch = collate_text([encode_sentence(vocab, sentence)]).to(next(model.parameters()).device)
    attention = model(batch.inputs, batch.mask).attention  # (L, 1, T, T) or None
    if attention is None:
        raise UserError("this language model has no self-attention (model.kind is not lstmn)")
    tokens = [SPECIAL_PIECES[BOS_ID], *display_pieces(vocab, sentence)]  # "<s>" read first
    return SentenceReading(tokens, attention[:, 0].cpu().numpy())
