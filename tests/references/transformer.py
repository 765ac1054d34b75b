"""The Transformer in loops, straight from Vaswani et al. 2017 (sec. 3), pre-norm.

Slow and obvious on purpose: one sentence, one position, one head and one key at a time,
reading the fast model's parameter tensors and nothing else of it. Each sentence reads only its
real source positions, and target position t reads only positions 0..t. Dropout is not
modelled: compare in eval mode.

    head_h(q_i) = sum_j alpha_ij (W_V^h x_j + b_V^h),  alpha_i = softmax_j(q_i . k_j / sqrt(d_k))
        with q_i = W_Q^h x_i + b_Q^h, k_j = W_K^h x_j + b_K^h             (eq. 1, sec. 3.2.2)
    MultiHead(x_i) = W_O [head_1; ...; head_H] + b_O
    FFN(x) = W_2 max(0, W_1 x + b_1) + b_2                                 (eq. 2)
    PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(...)        (sec. 3.5)
    input_i = sqrt(D) E[token_i] + PE(i)                                   (sec. 3.4)
    pre-norm layer: x <- x + Sublayer(LN(x)) for each sublayer; LN after the last layer

    transformer_loop(model, src, src_mask, tgt_in) -> logits (B, T, V), [weights (L, H, T, S_b)]
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attnlab.models import Seq2Seq
from attnlab.models.positions import LearnedPositions
from attnlab.models.transformer_layers import FeedForward


def linear(layer: nn.Linear, x: Tensor) -> Tensor:
    """W x + b for one vector x."""
    return layer.weight @ x + layer.bias


def layer_norm(norm: nn.LayerNorm, x: Tensor) -> Tensor:
    """(x - mean) / sqrt(var + eps) * gamma + beta, the biased variance of x's entries."""
    mean = sum(x.tolist()) / x.shape[0]
    variance = sum((value - mean) ** 2 for value in x.tolist()) / x.shape[0]
    return (x - mean) / math.sqrt(variance + norm.eps) * norm.weight + norm.bias


def position(positions: nn.Module, pos: int, dim: int) -> Tensor:
    """PE(pos) (D,): the sinusoid of sec. 3.5, or the learned table's row."""
    if isinstance(positions, LearnedPositions):
        return positions.table.weight[pos]
    values = []
    for index in range(dim):
        angle = pos / 10000 ** ((index - index % 2) / dim)
        values.append(math.sin(angle) if index % 2 == 0 else math.cos(angle))
    return torch.tensor(values, dtype=torch.float64)


def feed_forward(ff: FeedForward, x: Tensor) -> Tensor:
    return linear(ff.outer, torch.relu(linear(ff.inner, x)))


def multi_head(attention: nn.Module, query: Tensor, keys: list[Tensor]) -> tuple[Tensor, Tensor]:
    """One query (D,) over the keys it may read (each (Dk,)) -> output (D,), weights (H, n)."""
    heads, size = attention.heads, attention.head_dim
    contexts, weights = [], []
    for h in range(heads):
        rows = slice(h * size, (h + 1) * size)
        q = attention.query_proj.weight[rows] @ query + attention.query_proj.bias[rows]
        scores, values = [], []
        for key in keys:
            k = attention.key_proj.weight[rows] @ key + attention.key_proj.bias[rows]
            scores.append(float(q @ k) / math.sqrt(size))
            values.append(attention.value_proj.weight[rows] @ key + attention.value_proj.bias[rows])
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        alpha = [e / sum(exps) for e in exps]
        context = torch.zeros(size, dtype=torch.float64)
        for a, v in zip(alpha, values, strict=True):
            context = context + a * v
        contexts.append(context)
        weights.append(alpha)
    output = linear(attention.output_proj, torch.cat(contexts))
    return output, torch.tensor(weights, dtype=torch.float64)


def embed(embedding: nn.Embedding, positions: nn.Module, ids: list[int]) -> list[Tensor]:
    dim = embedding.weight.shape[1]
    return [math.sqrt(dim) * embedding.weight[i] + position(positions, p, dim)
            for p, i in enumerate(ids)]


def encode_sentence(encoder: nn.Module, ids: list[int]) -> list[Tensor]:
    """The real source ids of one sentence -> its annotations, one (D,) per position."""
    x = embed(encoder.embedding, encoder.positions, ids)
    for layer in encoder.layers:
        normed = [layer_norm(layer.self_norm, v) for v in x]
        x = [x[i] + multi_head(layer.self_attention, normed[i], normed)[0] for i in range(len(x))]
        x = [v + feed_forward(layer.feed_forward, layer_norm(layer.ff_norm, v)) for v in x]
    return [layer_norm(encoder.norm, v) for v in x]


def decode_sentence(decoder: nn.Module, annotations: list[Tensor],
                    ids: list[int]) -> tuple[Tensor, Tensor]:
    """Teacher forcing of one sentence: target inputs `ids` -> logits (T, V), cross-attention
    weights (L, H, T, S)."""
    x = embed(decoder.embedding, decoder.positions, ids)
    layer_weights = []
    for layer in decoder.layers:
        normed = [layer_norm(layer.self_norm, v) for v in x]
        x = [x[t] + multi_head(layer.self_attention, normed[t], normed[: t + 1])[0]
             for t in range(len(x))]  # causal: position t reads 0..t
        crossed = [multi_head(layer.cross_attention, layer_norm(layer.cross_norm, v), annotations)
                   for v in x]
        x = [v + out for v, (out, _) in zip(x, crossed, strict=True)]
        x = [v + feed_forward(layer.feed_forward, layer_norm(layer.ff_norm, v)) for v in x]
        layer_weights.append(torch.stack([w for _, w in crossed], 1))  # (H, T, S)
    output = decoder.output
    logits = []
    for v in x:
        features = layer_norm(decoder.norm, v)
        if output.proj is not None:
            logits.append(linear(output.proj, features))
        else:  # tied: the target embedding matrix, and a bias of its own
            logits.append(output.tied.weight @ features + output.bias)
    return torch.stack(logits), torch.stack(layer_weights)


def transformer_loop(model: Seq2Seq, src: Tensor, src_mask: Tensor,
                     tgt_in: Tensor) -> tuple[Tensor, list[Tensor]]:
    """Every sentence alone: logits (B, T, V) at every target position, and per sentence the
    cross-attention weights (L, H, T, S_b) over its S_b real source positions."""
    logits, weights = [], []
    for row in range(src.shape[0]):
        real = [int(i) for i, keep in zip(src[row], src_mask[row], strict=True) if keep]
        annotations = encode_sentence(model.encoder, real)
        sentence_logits, sentence_weights = decode_sentence(model.decoder, annotations,
                                                            tgt_in[row].tolist())
        logits.append(sentence_logits)
        weights.append(sentence_weights)
    return torch.stack(logits), weights
