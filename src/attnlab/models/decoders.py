"""The three translation decoders (docs/equations.md): none (Sutskever/Cho), Bahdanau and Luong.

Each implements `start(encoded) -> DecoderState` and `run(embedded (B, T, E), state) ->
(features (B, T, F), attention AttentionOutput | None, state)`; the base class turns features into
logits for teacher forcing (`forward` at the real target positions, `all_positions` at every
one) and for one step at a time (`step`).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlab.attention import AttentionOutput, Weights, map_weights

from .attention_layer import AttentionLayer
from .decoder_base import DecoderOutput, DecoderState, OutputLayer
from .encoder import EncoderOutput
from .rnn import State, make_rnn, run_rnn, top_layer


class Bridge(nn.Module):
    """Initial decoder state tanh(W x) for every layer from a source summary x (B, D).
    An LSTM's memory cell starts at zero."""

    def __init__(self, input_dim: int, hidden_dim: int, layers: int, rnn: str):
        super().__init__()
        self.linear = nn.Linear(input_dim, hidden_dim * layers)
        self.layers, self.hidden_dim, self.is_lstm = layers, hidden_dim, rnn == "lstm"

    def forward(self, summary: Tensor) -> State:
        h = torch.tanh(self.linear(summary))  # (B, L * H)
        h = h.view(-1, self.layers, self.hidden_dim).transpose(0, 1).contiguous()  # (L, B, H)
        return (h, torch.zeros_like(h)) if self.is_lstm else (h,)


# what `run` returns: features (B, T, F), the attention of every step (or None), the new state
Run = tuple[Tensor, AttentionOutput | None, DecoderState]


class RecurrentDecoder(nn.Module):
    """Embedding + subclass-specific recurrence + output layer: the base of every translation
    decoder (the Transformer's too, whose `run` continues from its cached positions)."""

    output: OutputLayer
    attention: AttentionLayer | None  # None here; the attending decoders set theirs

    def __init__(self, vocab_size: int, embedding_dim: int, dropout: float, pad_id: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.attention = None

    def start(self, encoded: EncoderOutput) -> DecoderState:
        raise NotImplementedError

    def attention_layers(self) -> list[nn.Module]:
        """Every layer that attends over the source, first to last, each with an
        `intervention` hook (attnlab.explain.intervening): one here, or none without
        attention; a Transformer has one per layer."""
        return [] if self.attention is None else [self.attention]

    def context_weight(self) -> Tensor | None:
        """W (F, D): the first layer that reads the attention's context c_t = sum_j a_tj h_j,
        its block for c_t, so that position j contributes a_tj W h_j to what comes next
        (Kobayashi et al. 2020's norm-based reading); None without attention."""
        return None

    def run(self, embedded: Tensor, state: DecoderState) -> Run:
        raise NotImplementedError

    def forward(self, tgt_in: Tensor, encoded: EncoderOutput, tgt_mask: Tensor) -> DecoderOutput:
        """Teacher forcing for training: tgt_in (B, T) = BOS + target, tgt_mask (B, T) ->
        DecoderOutput with logits (N, V) at the N real positions only (row-major, as
        `tensor[tgt_mask]`): the output layer and its softmax are the costliest part of
        training, and padding needs neither."""
        features, attention = self.teacher_forced(tgt_in, encoded)
        return DecoderOutput.of(self.output(self.dropout(features[tgt_mask])), attention)

    def all_positions(self, tgt_in: Tensor, encoded: EncoderOutput) -> DecoderOutput:
        """Teacher forcing at every position, padding included: logits (B, T, V)."""
        features, attention = self.teacher_forced(tgt_in, encoded)
        return DecoderOutput.of(self.output(self.dropout(features)), attention)

    def teacher_forced(self, tgt_in: Tensor,
                       encoded: EncoderOutput) -> tuple[Tensor, AttentionOutput | None]:
        """tgt_in (B, T) -> features (B, T, F) and the attention of every step."""
        embedded = self.dropout(self.embedding(tgt_in))  # (B, T, E)
        features, attention, _ = self.run(embedded, self.start(encoded))
        return features, attention

    def step(
        self, tokens: Tensor, state: DecoderState
    ) -> tuple[Tensor, Weights | None, DecoderState]:
        """One step: tokens (B,) -> logits (B, V), attention weights (B, S) (local: windows,
        start (B,), weights (B, 2D + 1)) or None, new state."""
        embedded = self.dropout(self.embedding(tokens.unsqueeze(1)))  # (B, 1, E)
        features, attention, state = self.run(embedded, state)
        logits = self.output(self.dropout(features)).squeeze(1)
        if attention is None:
            return logits, None, state
        return logits, map_weights(attention.weights, lambda t: t.squeeze(1)), state


class PlainDecoder(RecurrentDecoder):
    """No attention (Cho et al. 2014): the fixed source summary c initialises the RNN and joins
    every input, s_t = f(s_{t-1}, [E y_{t-1}; c]); output from [s_t; E y_{t-1}; c]. Runs the
    whole target through the fused RNN at once."""

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int, summary_dim: int, *,
                 layers: int, rnn: str, dropout: float, output_dim: int, tied: bool, pad_id: int):
        super().__init__(vocab_size, embedding_dim, dropout, pad_id)
        self.rnn = make_rnn(rnn, embedding_dim + summary_dim, hidden_dim, layers, dropout)
        self.bridge = Bridge(summary_dim, hidden_dim, layers, rnn)
        self.readout = nn.Linear(hidden_dim + embedding_dim + summary_dim, output_dim)
        self.output = OutputLayer(output_dim, vocab_size, self.embedding if tied else None)

    def start(self, encoded: EncoderOutput) -> DecoderState:
        return DecoderState(self.bridge(encoded.summary), encoded.summary, None)

    def run(self, embedded: Tensor, state: DecoderState) -> Run:
        assert state.feed is not None  # the source summary c, which `start` puts there
        summary = state.feed.unsqueeze(1).expand(-1, embedded.shape[1], -1)  # (B, T, D)
        outputs, rnn_state = run_rnn(self.rnn, torch.cat([embedded, summary], -1), state.rnn)
        features = torch.tanh(self.readout(torch.cat([outputs, embedded, summary], -1)))
        step = state.step + embedded.shape[1]
        return features, None, DecoderState(rnn_state, state.feed, None, step)


class BahdanauDecoder(RecurrentDecoder):
    """Bahdanau et al. 2015: e_{t,i} = score(s_{t-1}, h_i); s_t = f(s_{t-1}, [E y_{t-1}; c_t]);
    s_0 = tanh(W_s h_1(backward)); deep output tanh(L [s_t; E y_{t-1}; c_t]) -> logits.
    Attention depends on s_{t-1}, so the recurrence runs step by step."""

    attention: AttentionLayer

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int, key_dim: int,
                 init_dim: int, attention: AttentionLayer, *, layers: int, rnn: str,
                 dropout: float, output_dim: int, tied: bool, pad_id: int):
        super().__init__(vocab_size, embedding_dim, dropout, pad_id)
        self.rnn = make_rnn(rnn, embedding_dim + key_dim, hidden_dim, layers, dropout)
        self.bridge = Bridge(init_dim, hidden_dim, layers, rnn)
        self.attention = attention
        self.readout = nn.Linear(hidden_dim + embedding_dim + key_dim, output_dim)
        self.output = OutputLayer(output_dim, vocab_size, self.embedding if tied else None)
        self.init_dim = init_dim
        self.key_dim = key_dim

    def context_weight(self) -> Tensor:
        """The deep output's block for c_t, L's columns of [s_t; E y_{t-1}; c_t]: the layer
        that turns the context into the next word (c_t also enters the next state's RNN input,
        through gates whose norm means less)."""
        return self.readout.weight[:, -self.key_dim:]  # (F, D)

    def start(self, encoded: EncoderOutput) -> DecoderState:
        backward_first = encoded.summary[:, -self.init_dim:]  # h_1(backward) (or forward last)
        memory = self.attention.memory(encoded.annotations, encoded.mask)
        return DecoderState(self.bridge(backward_first), None, memory)

    def run(self, embedded: Tensor, state: DecoderState) -> Run:
        rnn_state, memory = state.rnn, state.memory
        assert memory is not None  # the source side, which `start` puts there
        outputs: list[Tensor] = []  # s_t, (B, 1, H) each
        steps: list[AttentionOutput] = []
        for t in range(embedded.shape[1]):
            query = top_layer(rnn_state).unsqueeze(1)  # s_{t-1}: (B, 1, H)
            attended = self.attention.compact(query, memory, state.step + t)  # c_t
            x = torch.cat([embedded[:, t : t + 1], attended.context], -1)
            output, rnn_state = run_rnn(self.rnn, x, rnn_state)  # s_t: (B, 1, H)
            outputs.append(output)
            steps.append(attended)
        attention = AttentionOutput.cat(steps)
        states = torch.cat(outputs, 1)  # (B, T, H)
        features = torch.tanh(self.readout(torch.cat([states, embedded, attention.context], -1)))
        new_state = DecoderState(rnn_state, None, state.memory, state.step + embedded.shape[1])
        return features, attention, new_state


class LuongDecoder(RecurrentDecoder):
    """Luong et al. 2015: h_t = RNN(h_{t-1}, [E y_{t-1}; h~_{t-1}]) (input feeding),
    c_t from score(h_t, h_s), h~_t = tanh(W_c [c_t; h_t]), logits = W_s h~_t.
    Without input feeding the RNN runs over the whole target at once and attention for every t
    is one batched call."""

    attention: AttentionLayer

    def __init__(self, vocab_size: int, embedding_dim: int, hidden_dim: int, key_dim: int,
                 init_dim: int, attention: AttentionLayer, *, layers: int, rnn: str,
                 dropout: float, output_dim: int, tied: bool, input_feeding: bool, pad_id: int):
        super().__init__(vocab_size, embedding_dim, dropout, pad_id)
        feed_dim = output_dim if input_feeding else 0
        self.rnn = make_rnn(rnn, embedding_dim + feed_dim, hidden_dim, layers, dropout)
        self.bridge = Bridge(init_dim, hidden_dim, layers, rnn)
        self.attention = attention
        self.combine = nn.Linear(key_dim + hidden_dim, output_dim, bias=False)  # W_c
        self.output = OutputLayer(output_dim, vocab_size, self.embedding if tied else None)
        self.input_feeding, self.output_dim = input_feeding, output_dim
        self.key_dim = key_dim

    def context_weight(self) -> Tensor:
        """W_c's block for c_t in h~_t = tanh(W_c [c_t; h_t])."""
        return self.combine.weight[:, : self.key_dim]  # (F, D)

    def start(self, encoded: EncoderOutput) -> DecoderState:
        memory = self.attention.memory(encoded.annotations, encoded.mask)
        feed = None
        if self.input_feeding:
            feed = encoded.annotations.new_zeros(encoded.annotations.shape[0], self.output_dim)
        return DecoderState(self.bridge(encoded.summary), feed, memory)

    def attentional(self, hidden: Tensor, state: DecoderState,
                    step: int) -> tuple[Tensor, AttentionOutput]:
        """hidden (B, T, H) -> h~ (B, T, F) and the AttentionOutput."""
        assert state.memory is not None  # the source side, which `start` puts there
        attended = self.attention.compact(hidden, state.memory, step)
        return torch.tanh(self.combine(torch.cat([attended.context, hidden], -1))), attended

    def run(self, embedded: Tensor, state: DecoderState) -> Run:
        length = embedded.shape[1]
        if not self.input_feeding:  # the fast path: one fused RNN call, one attention call
            hidden, rnn_state = run_rnn(self.rnn, embedded, state.rnn)  # (B, T, H)
            features, attention = self.attentional(hidden, state, state.step)
            return features, attention, DecoderState(rnn_state, None, state.memory,
                                                     state.step + length)
        rnn_state, feed = state.rnn, state.feed
        assert feed is not None  # h~_0 = 0, which `start` puts there
        outputs: list[Tensor] = []  # h~_t, (B, 1, F) each
        steps: list[AttentionOutput] = []
        for t in range(length):
            x = torch.cat([embedded[:, t : t + 1], feed.unsqueeze(1)], -1)
            hidden, rnn_state = run_rnn(self.rnn, x, rnn_state)  # h_t: (B, 1, H)
            features, attended = self.attentional(hidden, state, state.step + t)
            feed = self.dropout(features).squeeze(1)  # h~_t feeds the next step
            outputs.append(features)
            steps.append(attended)
        new_state = DecoderState(rnn_state, feed, state.memory, state.step + length)
        return torch.cat(outputs, 1), AttentionOutput.cat(steps), new_state
