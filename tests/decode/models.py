"""Tiny random float64 translation models of every decoder and attention kind, and sources."""

from __future__ import annotations

import torch

from attnlab.data import EOS_ID, PAD_ID
from attnlab.decode import greedy_search
from models.variants import FIRST_WORD, V, translation_model

# The searched variants: every decoder (the Transformer's too), global/local-m/local-p/hard
# attention, 1-2 layers.
NAMES = [
    "none", "bahdanau-additive", "bahdanau-general-local-p", "bahdanau-lstm-additive-hard",
    "luong-feed-general", "luong-nofeed-dot", "luong-feed-concat-local-m",
    "luong-nofeed-gru2-location-local-p", "transformer",
]


def tiny(name: str, *, src_vocab: int = V, tgt_vocab: int = V, seed: int = 0):
    """A random model in float64, left in training mode with dropout (search must switch it
    off). Its EOS logit is tuned so that greedy outputs of `sources()` use about 60% of their
    length limit on average: some end with EOS, some run into the limit."""
    model = translation_model(name, src_vocab=src_vocab, tgt_vocab=tgt_vocab, seed=seed).double()
    output = model.decoder.output.proj
    with torch.no_grad():
        output.weight.mul_(4.0)  # sharper, source-dependent next-token distributions
        output.bias.zero_()
    src, mask = sources(vocab=src_vocab)
    low, high = -4.0, 4.0
    for _ in range(12):  # bisect the EOS bias
        with torch.no_grad():
            output.bias[EOS_ID] = (low + high) / 2
        found = greedy_search(model, src, mask, max_len=limit)
        used = [len(h.tokens) / limit(n) for h, n in zip(found, mask.sum(-1).tolist(),
                                                                strict=True)]
        if sum(used) / len(used) > 0.6:
            low = (low + high) / 2
        else:
            high = (low + high) / 2
    return model.train()


def sources(lengths=(3, 1, 6, 2, 5, 4, 6, 2, 3), seed: int = 1, vocab: int = V):
    """src (B, S) of random words + EOS, right-padded, and its mask (B, S)."""
    generator = torch.Generator().manual_seed(seed)
    src = torch.full((len(lengths), max(lengths) + 1), PAD_ID)
    for row, length in enumerate(lengths):
        src[row, :length] = torch.randint(FIRST_WORD, vocab, (length,), generator=generator)
        src[row, length] = EOS_ID
    return src, src != PAD_ID


def limit(source_length: int) -> int:
    """A per-sentence output limit, as translate uses: ratio * length + extra."""
    return int(1.5 * source_length) + 1


def vocabularies():
    """A character source vocabulary (words of several pieces) and a word target vocabulary,
    both of V ids, as `attnlab.translation.corpus.Vocabularies`."""
    from attnlab.data import SPECIAL_PIECES, TokenVocab
    from attnlab.translation.corpus import Vocabularies

    return Vocabularies(TokenVocab([*SPECIAL_PIECES, *"abcdefg "], "char"),
                        TokenVocab([*SPECIAL_PIECES, *"stuvwxyz"], "word"))
