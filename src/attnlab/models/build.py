"""Build a translation model from its config: the one place that reads ModelConfig."""

from __future__ import annotations

from attnlab.errors import ConfigError

from .attention_layer import AttentionLayer
from .config import EncoderConfig, ModelConfig
from .decoders import BahdanauDecoder, LuongDecoder, PlainDecoder
from .encoder import RNNEncoder
from .lstmn import LSTMNEncoder
from .seq2seq import Seq2Seq


def build_model(config: ModelConfig, src_vocab_size: int, tgt_vocab_size: int, *,
                max_src_len: int = 100, pad_id: int = 0) -> Seq2Seq:
    """A Seq2Seq for `config`; max_src_len sizes the `location` score."""
    enc, dec = config.encoder, config.decoder
    encoder = build_encoder(enc, src_vocab_size, max_src_len=max_src_len, pad_id=pad_id)
    key_dim = encoder.output_dim
    default_output = dec.embedding_dim if dec.kind != "luong" else dec.hidden_dim
    output_dim = dec.output_dim or (dec.embedding_dim if dec.tied_embeddings else default_output)
    if dec.tied_embeddings and output_dim != dec.embedding_dim:
        raise ConfigError(
            f"model.decoder.tied_embeddings needs output_dim == embedding_dim, got "
            f"output_dim={output_dim}, embedding_dim={dec.embedding_dim}"
        )
    common = dict(layers=dec.layers, rnn=dec.rnn, dropout=dec.dropout, output_dim=output_dim,
                  tied=dec.tied_embeddings, pad_id=pad_id)
    if dec.kind == "none":
        decoder = PlainDecoder(tgt_vocab_size, dec.embedding_dim, dec.hidden_dim, key_dim,
                               **common)
        return Seq2Seq(encoder, decoder, pad_id=pad_id)
    attention = AttentionLayer(dec.attention, dec.hidden_dim, key_dim, max_src_len)
    if dec.kind == "bahdanau":
        decoder = BahdanauDecoder(tgt_vocab_size, dec.embedding_dim, dec.hidden_dim, key_dim,
                                  enc.hidden_dim, attention, **common)
    else:
        decoder = LuongDecoder(tgt_vocab_size, dec.embedding_dim, dec.hidden_dim, key_dim,
                               key_dim, attention, input_feeding=dec.input_feeding, **common)
    return Seq2Seq(encoder, decoder, pad_id=pad_id,
                   hard=dec.attention if dec.attention.hard else None)


def build_encoder(enc: EncoderConfig, src_vocab_size: int, *, max_src_len: int,
                  pad_id: int) -> RNNEncoder | LSTMNEncoder:
    """The encoder `enc.kind` names; max_src_len sizes a `location` intra-attention score."""
    if enc.kind == "rnn":
        return RNNEncoder(src_vocab_size, enc.embedding_dim, enc.hidden_dim, layers=enc.layers,
                          bidirectional=enc.bidirectional, rnn=enc.rnn, dropout=enc.dropout,
                          pad_id=pad_id)
    if enc.bidirectional:
        raise ConfigError("model.encoder.kind=lstmn reads left to right: set "
                          "model.encoder.bidirectional: false")
    try:
        return LSTMNEncoder(src_vocab_size, enc.embedding_dim, enc.hidden_dim,
                            layers=enc.layers, dropout=enc.dropout, score=enc.score,
                            pad_id=pad_id, attention_dim=enc.attention_dim, max_len=max_src_len)
    except ValueError as error:  # an unknown score, say: name the config key
        raise ConfigError(f"model.encoder.score: {error}") from None
