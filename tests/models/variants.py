"""The small translation models the tests build: one table of decoder and attention variants and
one builder, shared by tests/models and tests/decode (`from models.variants import ...`)."""

from __future__ import annotations

from typing import NamedTuple

import torch

from attnlab.data import PAD_ID, SPECIAL_PIECES
from attnlab.models import (
    AttentionConfig,
    DecoderConfig,
    EncoderConfig,
    ModelConfig,
    Seq2Seq,
    build_model,
)

V = 12  # source and target vocabulary size
FIRST_WORD = len(SPECIAL_PIECES)  # the ids from here up are words, those below the specials
MAX_SRC_LEN = 12  # positions the `location` score knows; longer than any test source

# name: (decoder kind, attention options, other decoder options). A name reads kind, input
# feeding (luong), the RNN when not a 1-layer GRU, score, local-m/local-p, then hard or tied.
VARIANTS = {
    "none": ("none", {}, {}),
    "bahdanau-additive": ("bahdanau", {"score": "additive"}, {}),
    "bahdanau-lstm-additive": ("bahdanau", {"score": "additive"}, {"rnn": "lstm"}),
    "bahdanau-gru2-general": ("bahdanau", {"score": "general"}, {"layers": 2}),
    "bahdanau-lstm2-dot": ("bahdanau", {"score": "dot"}, {"rnn": "lstm", "layers": 2}),
    "bahdanau-location-tied": ("bahdanau", {"score": "location"}, {"tied_embeddings": True}),
    "bahdanau-cosine": ("bahdanau", {"score": "cosine"}, {}),
    "bahdanau-additive-local-m": ("bahdanau", {"score": "additive", "mechanism": "local-m",
                                               "window": 1}, {}),
    "bahdanau-general-local-p": ("bahdanau", {"score": "general", "mechanism": "local-p",
                                              "window": 2}, {}),
    "bahdanau-additive-hard": ("bahdanau", {"score": "additive", "mechanism": "hard"}, {}),
    "bahdanau-lstm-additive-hard": ("bahdanau", {"score": "additive", "mechanism": "hard"},
                                    {"rnn": "lstm"}),
    "luong-feed-general": ("luong", {"score": "general"}, {"input_feeding": True}),
    "luong-nofeed-general": ("luong", {"score": "general"}, {"input_feeding": False}),
    "luong-feed-dot": ("luong", {"score": "dot"}, {"input_feeding": True}),
    "luong-nofeed-dot": ("luong", {"score": "dot"}, {"input_feeding": False}),
    "luong-feed-lstm2-dot": ("luong", {"score": "dot"},
                             {"input_feeding": True, "rnn": "lstm", "layers": 2}),
    "luong-nofeed-gru2-additive": ("luong", {"score": "additive"},
                                   {"input_feeding": False, "layers": 2}),
    "luong-feed-location": ("luong", {"score": "location"}, {"input_feeding": True}),
    "luong-nofeed-location": ("luong", {"score": "location"}, {"input_feeding": False}),
    "luong-nofeed-lstm-location": ("luong", {"score": "location"},
                                   {"input_feeding": False, "rnn": "lstm"}),
    "luong-nofeed-lstm-cosine": ("luong", {"score": "cosine"},
                                 {"input_feeding": False, "rnn": "lstm"}),
    "luong-feed-scaled-dot-tied": ("luong", {"score": "scaled_dot"},
                                   {"input_feeding": True, "tied_embeddings": True}),
    "luong-feed-dot-local-m": ("luong", {"score": "dot", "mechanism": "local-m", "window": 1},
                               {"input_feeding": True}),
    "luong-feed-concat-local-m": ("luong", {"score": "concat", "mechanism": "local-m", "window": 1},
                                  {"input_feeding": True}),
    "luong-nofeed-general-local-m": ("luong", {"score": "general", "mechanism": "local-m",
                                                "window": 1},
                                     {"input_feeding": False}),
    "luong-feed-lstm-additive-local-p": ("luong", {"score": "additive", "mechanism": "local-p",
                                                   "window": 1},
                                         {"input_feeding": True, "rnn": "lstm"}),
    "luong-nofeed-general-local-p": ("luong", {"score": "general", "mechanism": "local-p",
                                               "window": 2}, {"input_feeding": False}),
    "luong-nofeed-gru2-location-local-p": ("luong", {"score": "location", "mechanism": "local-p",
                                                     "window": 2},
                                           {"input_feeding": False, "layers": 2}),
    # the Transformer (both sides, d_model = decoder_hidden, 2 heads): see translation_model
    "transformer": ("transformer", {"score": "scaled_dot"}, {"heads": 2, "layers": 2}),
}


class Sizes(NamedTuple):
    """Embedding and hidden sizes. The encoder is bidirectional: annotations are
    2 * encoder_hidden wide: as wide as the decoder state, so the `dot` score applies."""

    source_embedding: int = 6
    encoder_hidden: int = 4
    target_embedding: int = 6
    decoder_hidden: int = 8

    def times(self, width: int) -> Sizes:
        return Sizes(*(size * width for size in self))


SMALL = Sizes()


def translation_model(name: str, *, sizes: Sizes = SMALL, src_vocab: int = V,
                      tgt_vocab: int = V, encoder_layers: int = 1, dropout: float = 0.2,
                      seed: int = 0) -> Seq2Seq:
    """The float32 model of VARIANTS[name], built from its config as `attnlab train` does, with
    torch's generator seeded first (so `seed` fixes every weight); in training mode."""
    kind, attention, decoder = VARIANTS[name]
    encoder = EncoderConfig(embedding_dim=sizes.source_embedding,
                            hidden_dim=sizes.encoder_hidden, layers=encoder_layers,
                            dropout=dropout)
    target_embedding = sizes.target_embedding
    if kind == "transformer":  # one width, d_model, on both sides
        width = target_embedding = sizes.decoder_hidden
        encoder = EncoderConfig(kind="transformer", embedding_dim=width, hidden_dim=width,
                                layers=encoder_layers, heads=decoder["heads"], dropout=dropout)
    config = ModelConfig(
        encoder=encoder,
        decoder=DecoderConfig(kind=kind, embedding_dim=target_embedding,
                              hidden_dim=sizes.decoder_hidden, dropout=dropout,
                              attention=AttentionConfig(**attention), **decoder),
    )
    torch.manual_seed(seed)
    return build_model(config, src_vocab, tgt_vocab, max_src_len=MAX_SRC_LEN, pad_id=PAD_ID)


def tiny_model(src_vocab: int, tgt_vocab: int, decoder: str = "transformer", *,
               layers: int = 2, heads: int = 3, seed: int = 0) -> Seq2Seq:
    """A random float64 model in eval mode, d_model 6: a Transformer of `layers` layers and
    `heads` heads on both sides, or a recurrent `decoder` kind with additive attention (the
    per-layer and per-head tests' model, and their model without heads)."""
    width = 6
    if decoder == "transformer":
        sides = dict(embedding_dim=width, hidden_dim=width, layers=layers, ff_dim=10,
                     dropout=0.0, heads=heads)
        config = ModelConfig(EncoderConfig(kind="transformer", **sides),
                             DecoderConfig(kind="transformer", **sides,
                                           attention=AttentionConfig(score="scaled_dot")))
    else:
        config = ModelConfig(EncoderConfig(embedding_dim=5, hidden_dim=3, dropout=0.0),
                             DecoderConfig(kind=decoder, embedding_dim=5, hidden_dim=width,
                                           dropout=0.0,
                                           attention=AttentionConfig("additive", hidden_dim=4)))
    torch.manual_seed(seed)
    model = build_model(config, src_vocab, tgt_vocab, max_src_len=20)
    return model.double().eval()
