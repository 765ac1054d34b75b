"""Build every model from its config: the one place that reads the `model:` dataclasses.

Each choice a config makes (encoder kind, decoder kind, mechanism, image encoder, LM reader) is a
lookup in one table here; a constructor then takes built modules and plain numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from torch import nn

from attnlab.attention import (
    MechanismOptions,
    ReinforceWeights,
    ScoreDims,
    build_mechanism,
    build_score,
)
from attnlab.errors import ConfigError

from . import config as schema  # the model dataclasses this module reads
from .attention_layer import AttentionLayer
from .captioner import Captioner, ShowAttendTellDecoder
from .decoders import BahdanauDecoder, LuongDecoder, PlainDecoder, RecurrentDecoder
from .encoder import RNNEncoder
from .image_encoder import ConvEncoder, ResNetEncoder
from .language_model import LanguageModel, LSTMReader
from .lstmn import LSTMN, LSTMNEncoder
from .positions import POSITIONS
from .seq2seq import Seq2Seq
from .transformer import TransformerDecoder, TransformerEncoder


def build_attention(config: schema.AttentionConfig, query_dim: int, key_dim: int, max_len: int,
                    where: str = "model.decoder.attention") -> AttentionLayer:
    """The mechanism `config` describes around its score; max_len: the source positions a
    `location` score must address when config.max_len is not set."""
    dims = ScoreDims(query_dim, key_dim, config.hidden_dim, config.max_len or max_len,
                     config.sharpness)
    options = MechanismOptions(window=config.window, expectation_prob=config.expectation_prob)
    try:
        return AttentionLayer(build_mechanism(config.mechanism, build_score(config.score, dims),
                                              options))
    except ValueError as error:  # sizes a score cannot take, a bad window
        raise ConfigError(f"{where}: {error}") from None


def reinforce_weights(config: schema.AttentionConfig) -> ReinforceWeights | None:
    """Hard attention's REINFORCE weights, or None for soft attention."""
    return ReinforceWeights(config.lambda_r, config.lambda_e) if config.hard else None


# ---- translation -------------------------------------------------------------------------

@dataclass
class DecoderSizes:
    """What a translation decoder is built for: vocabulary, annotation size, the size of the
    summary the bridge starts from, and the longest source (for `location`)."""

    vocab: int
    key_dim: int
    init_dim: int
    max_src_len: int
    pad_id: int


def _rnn_options(dec: schema.DecoderConfig, sizes: DecoderSizes) -> dict[str, Any]:
    default_output = dec.embedding_dim if dec.kind != "luong" else dec.hidden_dim
    output_dim = dec.output_dim or (dec.embedding_dim if dec.tied_embeddings else default_output)
    if dec.tied_embeddings and output_dim != dec.embedding_dim:
        raise ConfigError(
            f"model.decoder.tied_embeddings needs output_dim == embedding_dim, got "
            f"output_dim={output_dim}, embedding_dim={dec.embedding_dim}"
        )
    return dict(layers=dec.layers, rnn=dec.rnn, dropout=dec.dropout, output_dim=output_dim,
                tied=dec.tied_embeddings, pad_id=sizes.pad_id)


def _attention(dec: schema.DecoderConfig, sizes: DecoderSizes) -> AttentionLayer:
    return build_attention(dec.attention, dec.hidden_dim, sizes.key_dim, sizes.max_src_len)


def _transformer_decoder(dec: schema.DecoderConfig, sizes: DecoderSizes) -> TransformerDecoder:
    positions = POSITIONS[dec.positions](dec.hidden_dim, sizes.max_src_len)
    return TransformerDecoder(sizes.vocab, dec.hidden_dim, sizes.key_dim,
                              heads=dec.heads or 1, ff_dim=dec.ff_dim or 4 * dec.hidden_dim,
                              layers=dec.layers, dropout=dec.dropout, positions=positions,
                              tied=dec.tied_embeddings, pad_id=sizes.pad_id)


DECODERS: dict[str, Callable[[schema.DecoderConfig, DecoderSizes], RecurrentDecoder]] = {
    "none": lambda d, s: PlainDecoder(s.vocab, d.embedding_dim, d.hidden_dim, s.key_dim,
                                      **_rnn_options(d, s)),
    "bahdanau": lambda d, s: BahdanauDecoder(s.vocab, d.embedding_dim, d.hidden_dim, s.key_dim,
                                             s.init_dim, _attention(d, s), **_rnn_options(d, s)),
    "luong": lambda d, s: LuongDecoder(s.vocab, d.embedding_dim, d.hidden_dim, s.key_dim,
                                       s.key_dim, _attention(d, s),
                                       input_feeding=d.input_feeding, **_rnn_options(d, s)),
    "transformer": _transformer_decoder,
}


# what build_encoder / build_image_encoder return: modules with an int output_dim (and, for
# images, grid_size)
TextEncoder: TypeAlias = "RNNEncoder | LSTMNEncoder | TransformerEncoder"
ImageEncoder: TypeAlias = "ConvEncoder | ResNetEncoder"


def _lstmn_encoder(enc: schema.EncoderConfig, vocab: int, max_src_len: int,
                   pad_id: int) -> LSTMNEncoder:
    if enc.bidirectional:
        raise ConfigError("model.encoder.kind=lstmn reads left to right: set "
                          "model.encoder.bidirectional: false")
    try:
        return LSTMNEncoder(vocab, enc.embedding_dim, enc.hidden_dim, layers=enc.layers,
                            dropout=enc.dropout, score=enc.score, pad_id=pad_id,
                            attention_dim=enc.attention_dim, max_len=max_src_len)
    except ValueError as error:  # sizes its score cannot take
        raise ConfigError(f"model.encoder.score: {error}") from None


def _transformer_encoder(enc: schema.EncoderConfig, vocab: int, max_src_len: int,
                        pad_id: int) -> TransformerEncoder:
    positions = POSITIONS[enc.positions](enc.hidden_dim, max_src_len)
    return TransformerEncoder(vocab, enc.hidden_dim, heads=enc.heads or 1,
                              ff_dim=enc.ff_dim or 4 * enc.hidden_dim, layers=enc.layers,
                              dropout=enc.dropout, positions=positions, pad_id=pad_id)


ENCODERS: dict[str, Callable[[schema.EncoderConfig, int, int, int], TextEncoder]] = {
    "rnn": lambda e, vocab, max_len, pad: RNNEncoder(
        vocab, e.embedding_dim, e.hidden_dim, layers=e.layers, bidirectional=e.bidirectional,
        rnn=e.rnn, dropout=e.dropout, pad_id=pad),
    "lstmn": _lstmn_encoder,
    "transformer": _transformer_encoder,
}


def build_model(config: schema.ModelConfig, src_vocab_size: int, tgt_vocab_size: int, *,
                max_src_len: int = 100, pad_id: int = 0) -> Seq2Seq:
    """A Seq2Seq for `config`; max_src_len sizes the `location` score."""
    encoder = build_encoder(config.encoder, src_vocab_size, max_src_len=max_src_len,
                            pad_id=pad_id)
    # Bahdanau's s_0 starts from h_1(backward): the last encoder.hidden_dim of the summary
    # (a transformer encoder's summary, the mean of its outputs, is hidden_dim wide).
    sizes = DecoderSizes(tgt_vocab_size, encoder.output_dim, config.encoder.hidden_dim,
                         max_src_len, pad_id)
    decoder = DECODERS[config.decoder.kind](config.decoder, sizes)
    attention = config.decoder.attention
    reinforce = reinforce_weights(attention) if config.decoder.kind != "none" else None
    return Seq2Seq(encoder, decoder, pad_id=pad_id, reinforce=reinforce)


def build_encoder(enc: schema.EncoderConfig, src_vocab_size: int, *, max_src_len: int,
                  pad_id: int) -> TextEncoder:
    """The encoder `enc.kind` names; max_src_len sizes a `location` intra-attention score."""
    return ENCODERS[enc.kind](enc, src_vocab_size, max_src_len, pad_id)


# ---- captioning --------------------------------------------------------------------------

IMAGE_ENCODERS: dict[str, Callable[[schema.ImageEncoderConfig], ImageEncoder]] = {
    "cnn": lambda c: ConvEncoder(c.channels, positions=c.positions),
    "resnet": lambda c: ResNetEncoder(c.resnet, c.weights, stages=c.resnet_stages,
                                      fine_tune=c.fine_tune, positions=c.positions),
}


def build_image_encoder(config: schema.ImageEncoderConfig) -> ImageEncoder:
    return IMAGE_ENCODERS[config.kind](config)


def build_captioner(config: schema.CaptionerConfig, vocab_size: int, image_size: int) -> Captioner:
    """The Captioner of `config` for square images of `image_size` pixels (the `location`
    score needs the number of annotations L)."""
    encoder = build_image_encoder(config.encoder)
    height, width = encoder.grid_size(image_size, image_size)
    dec, att = config.decoder, config.decoder.attention
    attention = build_attention(att, dec.hidden_dim, encoder.output_dim, height * width)
    decoder = ShowAttendTellDecoder(vocab_size, dec.embedding_dim, dec.hidden_dim,
                                    encoder.output_dim, attention, gate=dec.gate,
                                    dropout=dec.dropout)
    return Captioner(encoder, decoder, reinforce=reinforce_weights(att),
                     doubly_stochastic=0.0 if att.hard else att.doubly_stochastic)


# ---- language models ---------------------------------------------------------------------

# One line per reader; `max_len` sizes the LSTMN's `location` score.
READERS: dict[str, Callable[[schema.LanguageModelConfig, int], nn.Module]] = {
    "lstmn": lambda c, max_len: LSTMN(c.embedding_dim, c.hidden_dim, layers=c.layers,
                                      dropout=c.dropout, score=c.score,
                                      attention_dim=c.attention_dim, max_len=max_len),
    "lstm": lambda c, max_len: LSTMReader(c.embedding_dim, c.hidden_dim, c.layers, c.dropout),
}


def build_language_model(config: schema.LanguageModelConfig, vocab_size: int, *, max_len: int,
                         pad_id: int = 0) -> LanguageModel:
    """The LanguageModel `config` describes; max_len: the longest input it will read."""
    try:
        reader = READERS[config.kind](config, max_len)
    except ValueError as error:  # sizes its score cannot take
        raise ConfigError(f"model.score: {error}") from None
    return LanguageModel(vocab_size, config.embedding_dim, reader, config.hidden_dim,
                         dropout=config.dropout, pad_id=pad_id)
