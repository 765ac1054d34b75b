"""The Bahdanau and Luong decoders in loops, straight from the equations page of the docs
("The translation models", docs/equations.md).

Slow and obvious on purpose: one sentence, one target step, one vector at a time, reading the fast
decoder's parameter tensors and nothing else of it. The GRU/LSTM cells are written out from
torch's documented gate layout (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; gates
r, z, n for a GRU and i, f, g, o for an LSTM). Attention comes from attnlab.attention.reference
(itself the specification of every score, global and local). Each sentence reads only its real
source positions. Dropout and hard attention's sampling are not modelled: compare in eval mode.

    decoder_loop(decoder, encoded, tgt_in) -> logits (B, T, V), weights (B, T, S)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlab.attention import HardAttention, LocalAttention, Mechanism
from attnlab.models.decoder_base import OutputLayer
from attnlab.models.decoders import BahdanauDecoder, LuongDecoder
from attnlab.models.encoder import EncoderOutput
from references.attention import attend_loop, local_loop

Layers = list[tuple[Tensor, ...]]  # per RNN layer: (h,) for a GRU, (h, c) for an LSTM, each (H,)


def gru_cell(rnn: nn.RNNBase, layer: int, x: Tensor, h: Tensor) -> Tensor:
    """One GRU step (torch.nn.GRU docs): x (I,), h (H,) -> h' (H,).

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr);  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h' = (1 - z) * n + z * h
    """
    w_ih, w_hh = getattr(rnn, f"weight_ih_l{layer}"), getattr(rnn, f"weight_hh_l{layer}")
    b_ih, b_hh = getattr(rnn, f"bias_ih_l{layer}"), getattr(rnn, f"bias_hh_l{layer}")
    size = h.shape[0]
    gi, gh = w_ih @ x + b_ih, w_hh @ h + b_hh  # (3H,) each, gates r | z | n
    r = torch.sigmoid(gi[:size] + gh[:size])
    z = torch.sigmoid(gi[size : 2 * size] + gh[size : 2 * size])
    n = torch.tanh(gi[2 * size :] + r * gh[2 * size :])
    return (1 - z) * n + z * h


def lstm_cell(rnn: nn.LSTM, layer: int, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step (torch.nn.LSTM docs): x (I,), h, c (H,) -> h', c' (H,).

    [i; f; g; o] = [sigmoid; sigmoid; tanh; sigmoid](W_ih x + b_ih + W_hh h + b_hh)
    c' = f * c + i * g;  h' = o * tanh(c')
    """
    w_ih, w_hh = getattr(rnn, f"weight_ih_l{layer}"), getattr(rnn, f"weight_hh_l{layer}")
    b_ih, b_hh = getattr(rnn, f"bias_ih_l{layer}"), getattr(rnn, f"bias_hh_l{layer}")
    size = h.shape[0]
    gates = w_ih @ x + b_ih + w_hh @ h + b_hh  # (4H,): i | f | g | o
    i = torch.sigmoid(gates[:size])
    f = torch.sigmoid(gates[size : 2 * size])
    g = torch.tanh(gates[2 * size : 3 * size])
    o = torch.sigmoid(gates[3 * size :])
    c = f * c + i * g
    return o * torch.tanh(c), c


def rnn_step(rnn: nn.RNNBase, x: Tensor, state: Layers) -> Layers:
    """A stacked GRU/LSTM step: layer k reads layer k-1's new h (layer 0 reads x (I,))."""
    new_state: Layers = []
    for layer, parts in enumerate(state):
        if isinstance(rnn, nn.LSTM):
            new_state.append(lstm_cell(rnn, layer, x, *parts))
        else:
            new_state.append((gru_cell(rnn, layer, x, *parts),))
        x = new_state[-1][0]
    return new_state


def bridge_state(decoder: BahdanauDecoder | LuongDecoder, source: Tensor) -> Layers:
    """s_0 = tanh(W_s x) for every layer, x (I,) a source vector; an LSTM's cell starts at 0.

    The Bridge's one Linear holds the layers side by side: rows [k H, (k + 1) H) are layer k's.
    """
    linear, size = decoder.bridge.linear, decoder.bridge.hidden_dim
    h = torch.tanh(linear.weight @ source + linear.bias)  # (L * H,)
    layers = [h[k * size : (k + 1) * size] for k in range(decoder.bridge.layers)]
    if isinstance(decoder.rnn, nn.LSTM):
        return [(part, torch.zeros_like(part)) for part in layers]
    return [(part,) for part in layers]


def embed(embedding: nn.Embedding, token: int) -> Tensor:
    """E y (E,). Padding embeds to the constant 0 (nn.Embedding's padding_idx: never learned)."""
    if token == embedding.padding_idx:
        return embedding.weight.new_zeros(embedding.weight.shape[1])
    return embedding.weight[token]


def output_logits(output: OutputLayer, feature: Tensor) -> Tensor:
    """feature (F,) -> logits (V,): W_o feature + b_o, or E feature + b with tied embeddings."""
    if output.proj is not None:
        return output.proj.weight @ feature + output.proj.bias
    assert output.tied is not None and output.bias is not None  # set together (OutputLayer)
    return output.tied.weight @ feature + output.bias


def attend_one(mechanism: Mechanism, query: Tensor, keys: Tensor, t: int) -> tuple[Tensor, Tensor]:
    """alpha_t and c_t = sum_i alpha_{t,i} h_i for target step t (0-based).

    query (Dq,); keys (n, D) one sentence's real annotations -> context (D,), weights (n,).
    Local attention centres local-m's window on p_t = t. Hard attention in eval mode is its soft
    expectation (eval_mode="expectation") or the most likely annotation ("argmax").
    """
    q, k = query.view(1, 1, -1), keys.unsqueeze(0)  # (1, 1, Dq), (1, n, D)
    if isinstance(mechanism, LocalAttention):
        context, weights = local_loop(mechanism, q, k, k, None, offset=t)
    else:
        context, weights = attend_loop(mechanism.score, q, k, k, None)
    context, weights = context[0, 0], weights[0, 0]
    if isinstance(mechanism, HardAttention) and mechanism.eval_mode == "argmax":
        context = keys[int(weights.detach().argmax())]
    return context, weights


def first_backward(annotations: Tensor, init_dim: int) -> Tensor:
    """h_1(backward) from one sentence's real annotations (n, D): the last `init_dim` features
    of the first annotation when D = 2 init_dim; a left-to-right encoder has no backward state
    and the bridge reads its last state h_n instead."""
    if annotations.shape[1] == 2 * init_dim:
        return annotations[0, init_dim:]
    return annotations[-1]


def bahdanau_sentence(decoder: BahdanauDecoder, keys: Tensor, tokens: list[int]
                      ) -> tuple[list[Tensor], list[Tensor]]:
    """One sentence: keys (n, D) its real annotations, tokens its T inputs y_0..y_{T-1}.

    Bahdanau et al. 2015, eq. 4-6 and app. A.2.2 (docs/equations.md):
    e_{t,i} = score(s_{t-1}, h_i); c_t = sum_i alpha_{t,i} h_i; s_t = f(s_{t-1}, [E y_{t-1}; c_t]);
    s_0 = tanh(W_s h_1(backward)); deep output tanh(L [s_t; E y_{t-1}; c_t]) -> logits.
    Returns T logits (V,) and T weight vectors (n,).
    """
    mechanism, readout = decoder.attention.mechanism, decoder.readout
    state = bridge_state(decoder, first_backward(keys, decoder.init_dim))
    logits, weights = [], []
    for t, token in enumerate(tokens):
        y = embed(decoder.embedding, token)
        context, alpha = attend_one(mechanism, state[-1][0], keys, t)  # query s_{t-1}, top layer
        state = rnn_step(decoder.rnn, torch.cat([y, context]), state)
        s_t = state[-1][0]
        feature = torch.tanh(readout.weight @ torch.cat([s_t, y, context]) + readout.bias)
        logits.append(output_logits(decoder.output, feature))
        weights.append(alpha)
    return logits, weights


def luong_sentence(decoder: LuongDecoder, keys: Tensor, summary: Tensor, tokens: list[int]
                   ) -> tuple[list[Tensor], list[Tensor]]:
    """One sentence: keys (n, D) its real annotations, summary (D,) the encoder's summary.

    Luong et al. 2015, eq. 5-6 and sec. 3.3 (docs/equations.md):
    h_t = RNN(h_{t-1}, [E y_{t-1}; h~_{t-1}]) with h~_0 = 0 (input feeding) or
    RNN(h_{t-1}, E y_{t-1}); c_t from score(h_t, h_s);
    h~_t = tanh(W_c [c_t; h_t]); logits = W_s h~_t. h_0 = tanh(W summary) (the Bridge).
    Returns T logits (V,) and T weight vectors (n,).
    """
    mechanism, w_c = decoder.attention.mechanism, decoder.combine.weight
    state = bridge_state(decoder, summary)
    h_tilde = keys.new_zeros(w_c.shape[0])  # h~_0
    logits, weights = [], []
    for t, token in enumerate(tokens):
        y = embed(decoder.embedding, token)
        x = torch.cat([y, h_tilde]) if decoder.input_feeding else y
        state = rnn_step(decoder.rnn, x, state)
        h_t = state[-1][0]
        context, alpha = attend_one(mechanism, h_t, keys, t)
        h_tilde = torch.tanh(w_c @ torch.cat([context, h_t]))
        logits.append(output_logits(decoder.output, h_tilde))
        weights.append(alpha)
    return logits, weights


def decoder_loop(decoder: BahdanauDecoder | LuongDecoder, encoded: EncoderOutput,
                 tgt_in: Tensor) -> tuple[Tensor, Tensor]:
    """Teacher forcing, one sentence at a time over its real source positions only.

    encoded: annotations (B, S, D), mask (B, S), summary (B, D); tgt_in (B, T) ->
    logits (B, T, V) and attention weights (B, T, S), 0 on source padding.
    """
    batch_logits, batch_weights = [], []
    source_length = encoded.annotations.shape[1]
    for b in range(tgt_in.shape[0]):
        real = [i for i in range(source_length) if encoded.mask[b, i]]
        keys = encoded.annotations[b, real]  # (n, D)
        tokens = tgt_in[b].tolist()
        if isinstance(decoder, BahdanauDecoder):
            logits, weights = bahdanau_sentence(decoder, keys, tokens)
        elif isinstance(decoder, LuongDecoder):
            logits, weights = luong_sentence(decoder, keys, encoded.summary[b], tokens)
        else:
            raise TypeError(f"no reference for {type(decoder).__name__}")
        batch_logits.append(torch.stack(logits))  # (T, V)
        batch_weights.append(torch.stack([scatter(w, real, source_length) for w in weights]))
    return torch.stack(batch_logits), torch.stack(batch_weights)


def scatter(weights: Tensor, positions: list[int], length: int) -> Tensor:
    """weights (n,) over `positions` -> (length,), 0 elsewhere."""
    parts = [weights.new_zeros(()) for _ in range(length)]
    for w, i in zip(weights, positions, strict=True):
        parts[i] = w
    return torch.stack(parts)
