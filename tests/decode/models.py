"""Tiny random float64 translation models of every decoder and attention kind, and sources."""

from __future__ import annotations

import torch

from attnlab.decode import greedy_search
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model

V, PAD, BOS, EOS = 12, 0, 2, 3

# name: (decoder kind, attention settings, other decoder settings)
VARIANTS = {
    "none": ("none", {}, {}),
    "bahdanau-additive": ("bahdanau", {"score": "additive"}, {}),
    "bahdanau-local-p": ("bahdanau", {"score": "general", "window": 2, "predictive": True}, {}),
    "bahdanau-hard": ("bahdanau", {"score": "additive", "hard": True}, {"rnn": "lstm"}),
    "luong-feed-general": ("luong", {"score": "general"}, {"input_feeding": True}),
    "luong-dot": ("luong", {"score": "dot"}, {"input_feeding": False}),
    "luong-local-m": ("luong", {"score": "concat", "window": 1}, {"input_feeding": True}),
    "luong-local-p-location": ("luong", {"score": "location", "window": 2, "predictive": True},
                               {"input_feeding": False, "layers": 2}),
}


def tiny(name: str, *, src_vocab: int = V, tgt_vocab: int = V, seed: int = 0):
    """A random model in float64, left in training mode with dropout (search must switch it
    off). Its EOS logit is tuned so that greedy outputs of `sources()` use about 60% of their
    length limit on average: some end with EOS, some run into the limit."""
    kind, attention, decoder = VARIANTS[name]
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=6, hidden_dim=4, dropout=0.2),
        decoder=DecoderConfig(kind=kind, embedding_dim=6, hidden_dim=8, dropout=0.2,
                              attention=AttentionConfig(**attention), **decoder),
    )
    torch.manual_seed(seed)
    model = build_model(config, src_vocab, tgt_vocab, max_src_len=12, pad_id=PAD).double()
    output = model.decoder.output.proj
    with torch.no_grad():
        output.weight.mul_(4.0)  # sharper, source-dependent next-token distributions
        output.bias.zero_()
    src, mask = sources(vocab=src_vocab)
    low, high = -4.0, 4.0
    for _ in range(12):  # bisect the EOS bias
        with torch.no_grad():
            output.bias[EOS] = (low + high) / 2
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
    src = torch.full((len(lengths), max(lengths) + 1), PAD)
    for row, length in enumerate(lengths):
        src[row, :length] = torch.randint(4, vocab, (length,), generator=generator)
        src[row, length] = EOS
    return src, src != PAD


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
