"""The Transformer encoder-decoder (Vaswani et al. 2017), pre-norm, through the same Seq2Seq,
search and training as the recurrent decoders.

    TransformerEncoder(src (B, S), src_mask (B, S)) -> EncoderOutput, annotations (B, S, D)
    TransformerDecoder: start(encoded) -> DecoderState; run(embedded (B, T, D), state) ->
        features (B, T, D), AttentionOutput, state; forward / all_positions / step as every
        translation decoder (decoder_base.py), with the cross-attention of every layer and
        head in DecoderOutput.heads (B, L, H, T, S).

The attention the rest of attnlab reads (DecoderOutput.attention, a step's weights, heatmaps,
AER, readings) is one (T, S) matrix per sentence: the LAST layer's cross-attention, averaged
over its heads. That is the layer next to the output (what fairseq and OpenNMT-py report too),
and an average of distributions over the real source positions is one, so every reader of
(T, S) weights works unchanged. It is not the best alignment layer (Kobayashi et al. 2020 find
an earlier one): the full (B, L, H, T, S) is in DecoderOutput.heads for per-layer, per-head
views.

Cost discipline, as the recurrent decoders': `start` projects the encoder output into every
layer's cross-attention keys and values once per sentence (DecoderState.memory.projected,
(B, L, 2, H, S, d_k)); the self-attention keys and values of the target positions decoded so far
are cached (DecoderState.rnn: layer l's keys at 2l and values at 2l + 1, each (1, B, H, t, d_k),
the batch on axis 1 as an RNN state's), so a step computes only its own position.
`DecoderState.reorder` follows the beams through the caches, and the memory when sentences
leave. Dropout is applied to the token embeddings (every decoder's embedding path) before they
are scaled by sqrt(D) and the positions added, and to every sublayer's output.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attnlab.attention import AttentionOutput

from .attention_layer import Memory
from .decoder_base import DecoderOutput, DecoderState, OutputLayer
from .decoders import RecurrentDecoder, Run
from .encoder import EncoderOutput
from .multihead import KeyValues, MultiHeadAttention
from .transformer_layers import DecoderLayer, EncoderLayer


def scaled_embedding(vocab_size: int, model_dim: int, pad_id: int) -> nn.Embedding:
    """Token embeddings drawn from N(0, 1/D), so that sqrt(D) E[y] has unit scale, as the
    positions do, and a tied output layer starts with logits of unit scale (fairseq's
    Transformer does the same); the padding row is zero."""
    embedding = nn.Embedding(vocab_size, model_dim, padding_idx=pad_id)
    nn.init.normal_(embedding.weight, std=model_dim ** -0.5)
    with torch.no_grad():
        embedding.weight[pad_id].zero_()
    return embedding


def last_layer_average(heads: Tensor) -> Tensor:
    """The (T, S) attention attnlab reads: heads (B, L, H, T, S) -> the last layer's mean over
    heads (B, T, S)."""
    return heads[:, -1].mean(1)


class TransformerEncoder(nn.Module):
    """Embedding * sqrt(D) + positions, then `layers` pre-norm self-attention layers and a final
    LayerNorm; padding is masked out of every attention, so it cannot change a real position."""

    def __init__(self, vocab_size: int, model_dim: int, *, heads: int, ff_dim: int, layers: int,
                 dropout: float, positions: nn.Module, pad_id: int = 0):
        super().__init__()
        self.embedding = scaled_embedding(vocab_size, model_dim, pad_id)
        self.positions = positions
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(EncoderLayer(model_dim, heads, ff_dim, dropout)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(model_dim)
        self.scale = math.sqrt(model_dim)
        self.output_dim = model_dim

    def forward(self, src: Tensor, src_mask: Tensor) -> EncoderOutput:
        """src (B, S) ids; src_mask (B, S) bool. summary (B, D): the mean over real positions
        (what a recurrent decoder's bridge would start from); final: () (no RNN state)."""
        annotations, _ = self.read(src, src_mask)
        real = src_mask.unsqueeze(-1).to(annotations.dtype)  # (B, S, 1)
        summary = (annotations * real).sum(1) / real.sum(1).clamp_min(1.0)
        return EncoderOutput(annotations, src_mask, (), summary)

    def read(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        """annotations (B, S, D) and every layer's self-attention weights (B, L, H, S, S)."""
        embedded = self.dropout(self.embedding(src))  # (B, S, D)
        x = embedded * self.scale + self.positions(0, src.shape[1], embedded)
        weights = []
        for layer in self.layers:
            x, layer_weights = layer(x, src_mask)
            weights.append(layer_weights)
        return self.norm(x), torch.stack(weights, 1)


class TransformerDecoder(RecurrentDecoder):
    """Embedding * sqrt(D) + positions, `layers` pre-norm decoder layers (causal
    self-attention, cross-attention, feed-forward), a final LayerNorm, then the output layer
    (tied to the embedding when asked). `run` continues from the cached positions, so teacher
    forcing (one call over T positions) and search (T calls of one) compute the same thing."""

    def __init__(self, vocab_size: int, model_dim: int, key_dim: int, *, heads: int,
                 ff_dim: int, layers: int, dropout: float, positions: nn.Module, tied: bool,
                 pad_id: int = 0):
        super().__init__(vocab_size, model_dim, dropout, pad_id)
        self.embedding = scaled_embedding(vocab_size, model_dim, pad_id)
        self.positions = positions
        self.layers = nn.ModuleList(DecoderLayer(model_dim, heads, ff_dim, dropout, key_dim)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(model_dim)
        self.output = OutputLayer(model_dim, vocab_size, self.embedding if tied else None)
        self.scale = math.sqrt(model_dim)
        self.heads, self.head_dim = heads, model_dim // heads

    def context_weight(self) -> Tensor:
        """W_O W_V of the last layer's cross-attention (D, D_key), for the norm-based reading:
        position j adds sum_h alpha^h_tj W_O^h W_V^h h_j to that layer's output, which is
        a_tj W_O W_V h_j when the heads agree (a_tj their mean, the weights attnlab reads).
        Per-head norms, ||alpha^h_tj W_O^h W_V^h h_j||, are for the per-head readings."""
        last = self.layers[-1]
        assert isinstance(last, DecoderLayer)  # (what __init__ puts in the ModuleList)
        attention = last.cross_attention
        weight: Tensor = attention.output_proj.weight @ attention.value_proj.weight
        return weight

    def attention_layers(self) -> list[nn.Module]:
        return list(self.cross_attentions())

    def cross_attentions(self) -> list[MultiHeadAttention]:
        """Every layer's cross-attention, first to last: where attnlab.explain.intervening sets
        its hook (`MultiHeadAttention.intervention`)."""
        found = []
        for layer in self.layers:
            assert isinstance(layer, DecoderLayer)  # (what __init__ puts in the ModuleList)
            found.append(layer.cross_attention)
        return found

    def start(self, encoded: EncoderOutput) -> DecoderState:
        """Project the encoder output into every layer's cross-attention keys and values,
        once per sentence; the self-attention caches start empty."""
        projected = []
        for layer in self.layers:
            assert isinstance(layer, DecoderLayer)  # (what __init__ puts in the ModuleList)
            source = layer.cross_attention.project(encoded.annotations)  # (B, H, S, d_k) each
            projected.append(torch.stack([source.keys, source.values], 1))  # (B, 2, H, S, d_k)
        batch = encoded.annotations.shape[0]
        empty = encoded.annotations.new_zeros(1, batch, self.heads, 0, self.head_dim)
        memory = Memory(encoded.annotations, torch.stack(projected, 1), encoded.mask)
        return DecoderState((empty,) * (2 * len(self.layers)), None, memory)

    def run(self, embedded: Tensor, state: DecoderState) -> Run:
        features, heads, crossed, state = self.layered(embedded, state)
        return features, AttentionOutput(crossed, last_layer_average(heads)), state

    def layered(self, embedded: Tensor,
                state: DecoderState) -> tuple[Tensor, Tensor, Tensor, DecoderState]:
        """embedded (B, T, D) at positions state.step.. -> features (B, T, D), every layer's
        cross-attention weights (B, L, H, T, S), the last cross-attention output (B, T, D) and
        the state with T more cached positions."""
        memory = state.memory
        assert memory is not None  # the projected encoder output, which `start` puts there
        x = embedded * self.scale + self.positions(state.step, embedded.shape[1], embedded)
        caches: list[Tensor] = []
        weights: list[Tensor] = []
        for index, layer in enumerate(self.layers):
            cache = KeyValues(state.rnn[2 * index][0], state.rnn[2 * index + 1][0])
            source = KeyValues(memory.projected[:, index, 0], memory.projected[:, index, 1])
            x, cache, crossed, layer_weights = layer(x, cache, source, memory.mask, state.step)
            caches += [cache.keys.unsqueeze(0), cache.values.unsqueeze(0)]
            weights.append(layer_weights)
        new_state = DecoderState(tuple(caches), None, memory, state.step + embedded.shape[1])
        return self.norm(x), torch.stack(weights, 1), crossed, new_state

    def forward(self, tgt_in: Tensor, encoded: EncoderOutput, tgt_mask: Tensor) -> DecoderOutput:
        """Teacher forcing: logits (N, V) at the real target positions, attention (B, T, S)
        and every layer and head's cross-attention (B, L, H, T, S)."""
        features, heads = self.forced_heads(tgt_in, encoded)
        logits = self.output(self.dropout(features[tgt_mask]))
        return DecoderOutput(logits, last_layer_average(heads), heads=heads)

    def all_positions(self, tgt_in: Tensor, encoded: EncoderOutput) -> DecoderOutput:
        """Teacher forcing at every position: logits (B, T, V), weights as `forward`."""
        features, heads = self.forced_heads(tgt_in, encoded)
        logits = self.output(self.dropout(features))
        return DecoderOutput(logits, last_layer_average(heads), heads=heads)

    def forced_heads(self, tgt_in: Tensor, encoded: EncoderOutput) -> tuple[Tensor, Tensor]:
        """tgt_in (B, T) -> features (B, T, D) and cross-attention weights (B, L, H, T, S)."""
        embedded = self.dropout(self.embedding(tgt_in))  # (B, T, D)
        features, heads, _, _ = self.layered(embedded, self.start(encoded))
        return features, heads
