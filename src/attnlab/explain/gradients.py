"""The gradient of every forced output with respect to the source embeddings, computed the way
the model is built: what gradient x input and integrated gradients (attnlab.explain.attribution)
sum.

A reverse pass gives one output's gradient, so T rows need T of them; the captum path ran T
copies of the whole model (encoder and all T decoder steps, forward and backward) for every
point. Here:
- one forward pass per group of points (K interpolated sources, batch K), not K x T copies;
- the rows' backward passes run together, batched over the rows (`torch.autograd.grad` with
  `is_grads_batched`, a vmap over the grad_outputs), each row seeded with d log p(y_t) / d f_t
  at its own step of the decoder's features f: the output layer and its softmax over the
  vocabulary run once, forward, never once per row;
- the decoder runs in blocks of steps, each from the state the block before left, and the rows
  of a block are seeded in that block's features: a row's backward goes back through the steps
  up to its own block, not through all T (nearly a triangle, not a square);
- the encoder's outputs are cut from the graph between decoder and encoder, so that the
  decoder's backward stops there and the encoder's runs once for all rows.
Batches are sized by what they hold (BACKWARD_CELLS, FORWARD_CELLS): on a Multi30k-sized
model about 50 rows x points per backward, whose tensors then stay in cache, and about 20
points per forward. What is left is the Jacobian itself: its T x S values need min(T, S)
directions through the model's linearisation, forward or reverse, which multiplies each of
its matrices by min(T, S) vectors, as a forward pass of min(T, S) copies does;
benchmarks/explain.py times that floor beside gradient x input (docs/performance.md). Two
other ways were measured and not kept: forward-mode over the source positions (S copies with
dual numbers) cost 2-3x this, and running the encoder again over one copy per row for one
ordinary backward gained nothing once an unpadded batch ran its RNN unpacked
(attnlab.models.encoder: packing copied the whole input per step in backward).

Every encoder is attributed at its token embedding's output (`source_embedding`), the RNN's,
the LSTMN's and the Transformer's alike. The Transformer's encoder then scales it by sqrt(D)
and adds the positions (attnlab.models.transformer): the attribution is to the token
embeddings E[x_s], not to sqrt(D) E[x_s] + PE(s). Gradient x input is the same at either side of
the scaling (x . d/dx is unchanged by a constant factor); integrated gradients' baseline, the
padding's zero embedding, keeps the positions, so what they split among the positions is what
the tokens add to a source of positions alone. Its decoder continues a state as the recurrent
ones do (its self-attention keys and values cached), so the blocks of steps work unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn

from attnlab.models import Seq2Seq, TransformerEncoder
from attnlab.models.encoder import RNNEncoder
from attnlab.models.lstmn import LSTMNEncoder

# Sizes of a batch, in numbers held per tensor (what the source side weighs: rows x points x S
# x the encoder's width D): a batched backward's tensors stay in cache, a forward's graph in
# memory. Measured, one thread: see the module docstring.
BACKWARD_CELLS = 2**20   # rows x points x S x D of one batched backward
FORWARD_CELLS = 2**24    # points x T x S x D of one forward pass
MOST_POINTS = 64         # points of one forward pass at most
# attnlab.models.build's encoders: each has a token embedding and says its width, output_dim
ENCODERS = (RNNEncoder, LSTMNEncoder, TransformerEncoder)


@dataclasses.dataclass(frozen=True)
class SourcePath:
    """A forced pair and the straight line its source's embeddings are moved along: src,
    src_mask (1, S); tgt_in, tgt_out (1, T); embedded, baseline (1, S, E), the two ends."""

    src: Tensor
    src_mask: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    embedded: Tensor
    baseline: Tensor

    def at(self, points: Tensor) -> Tensor:
        """The source embeddings baseline + a (embedded - baseline) at each point a (K,):
        (K, S, E)."""
        points = points.to(self.embedded)
        return self.baseline + points.view(-1, 1, 1) * (self.embedded - self.baseline)


def source_gradients(model: Seq2Seq, path: SourcePath, points: Tensor,
                     weights: Tensor) -> Tensor:
    """weights[k] (d log p(y_t | x_k) / d x_k) . (embedded - baseline), summed over the
    embedding, at each point x_k = path.at(points[k]): (K, T, S). Gradient x input is the point
    1 with weight 1; integrated gradients sum a quadrature rule's. The model should be frozen
    (attnlab.explain.attribution.frozen)."""
    steps, positions = int(path.tgt_in.shape[1]), int(path.src.shape[1])
    width = encoder_width(model)
    group = max(1, min(MOST_POINTS, FORWARD_CELLS // (steps * positions * width)))
    with torch.enable_grad():
        return torch.cat([_group(model, path, points[first:first + group],
                                 weights[first:first + group])
                          for first in range(0, len(points), group)])


def path_log_probs(model: Seq2Seq, path: SourcePath, points: Tensor) -> Tensor:
    """log p(y_t | x_k) of every forced token at each point x_k = path.at(points[k]) (K,):
    (K, T), forward passes only, as many points at a time as FORWARD_CELLS allows."""
    found = []
    steps, positions = int(path.tgt_in.shape[1]), int(path.src.shape[1])
    group = max(1, min(MOST_POINTS, FORWARD_CELLS // (steps * positions * encoder_width(model))))
    with torch.no_grad():
        for first in range(0, len(points), group):
            inputs = path.at(points[first:first + group])
            K, S = int(inputs.shape[0]), int(path.src.shape[1])
            with replaced_output(source_embedding(model), inputs):
                out = model.all_positions(path.src.expand(K, S), path.src_mask.expand(K, S),
                                          path.tgt_in.expand(K, -1))
            found.append(chosen_log_probs(model, out.logits, path.tgt_out.expand(K, -1)))
    return torch.cat(found)


def encoder_width(model: Seq2Seq) -> int:
    """D, the width of the encoder's annotations: what sizes a batch's source side."""
    encoder = model.encoder
    assert isinstance(encoder, ENCODERS)  # attnlab.models.build's encoders
    return encoder.output_dim


def source_embedding(model: Seq2Seq) -> nn.Embedding:
    """The layer whose output is attributed: the encoder's token embedding (a Transformer's
    before its sqrt(D) scale and positions: see the module)."""
    embedding = model.encoder.embedding
    if not isinstance(embedding, nn.Embedding):
        raise TypeError(f"{type(model.encoder).__name__} has no token embedding to attribute to")
    return embedding


def chosen_log_probs(model: Seq2Seq, logits: Tensor, tokens: Tensor) -> Tensor:
    """log p of `tokens` (B, T) from the output layer's logits (B, T, V) (or log-probabilities,
    for a model that outputs them): (B, T)."""
    scores = logits if model.outputs_log_probs else logits.log_softmax(-1)
    return scores.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def _group(model: Seq2Seq, path: SourcePath, points: Tensor, weights: Tensor) -> Tensor:
    """source_gradients of a group of points that share one forward pass: (K, T, S)."""
    K, S = len(points), int(path.src.shape[1])
    delta = path.embedded - path.baseline                                   # (1, S, E)
    inputs = path.at(points).detach().requires_grad_(True)                   # (K, S, E)
    with replaced_output(source_embedding(model), inputs):
        encoded = model.encode(path.src.expand(K, S), path.src_mask.expand(K, S))
    cut, pairs = _cut(encoded)
    rows_per_block = max(1, BACKWARD_CELLS // (K * S * encoder_width(model)))
    blocks = _decode_in_blocks(model, cut, path.tgt_in.expand(K, -1), rows_per_block)
    features = torch.cat([block for _, block in blocks], 1)                 # (K, T, F)
    seed = _output_gradient(model, features, path.tgt_out.expand(K, -1))    # (K, T, F)
    seed = seed * weights.view(K, 1, 1)
    leaves = [leaf for _, leaf in pairs]
    per_leaf: list[list[Tensor]] = [[] for _ in pairs]
    for first, block in blocks:
        found = batched_grad([block], leaves, [_diagonal(seed, first, block.shape[1])])
        for kept, leaf, got in zip(per_leaf, leaves, found, strict=True):
            kept.append(torch.zeros(block.shape[1], *leaf.shape, dtype=leaf.dtype,
                                    device=leaf.device) if got is None else got)
    grads = [torch.cat(kept) for kept in per_leaf]                          # each (T, K, ...)
    per_row = []
    for rows in _runs(int(path.tgt_in.shape[1]), rows_per_block):
        (got,) = batched_grad([original for original, _ in pairs], [inputs],
                              [grad[rows] for grad in grads])
        assert got is not None  # the encoder reads its embeddings
        per_row.append((got * delta).sum(-1))                               # (n, K, S)
    return torch.cat(per_row).transpose(0, 1).detach()


def _diagonal(seed: Tensor, first: int, n: int) -> Tensor:
    """grad_outputs (n, K, n, F) for a block's features (K, n, F): row i gets seed[:, first + i]
    at its own step i, zero elsewhere."""
    grad = seed.new_zeros(n, seed.shape[0], n, seed.shape[2])
    rows = torch.arange(n, device=seed.device)
    grad[rows, :, rows] = seed[:, first:first + n].transpose(0, 1)
    return grad


def _runs(steps: int, size: int) -> list[slice]:
    return [slice(first, min(first + size, steps)) for first in range(0, steps, size)]


def _cut(encoded: Any) -> tuple[Any, list[tuple[Tensor, Tensor]]]:
    """The encoder's output (a dataclass) with each tensor that carries a gradient replaced by
    a detached copy that asks for one, and the (original, copy) pairs."""
    pairs: list[tuple[Tensor, Tensor]] = []

    def leaf(value: Any) -> Any:
        if isinstance(value, Tensor) and value.requires_grad:
            copy = value.detach().requires_grad_(True)
            pairs.append((value, copy))
            return copy
        if isinstance(value, tuple):
            return tuple(leaf(part) for part in value)
        return value

    changes = {f.name: leaf(getattr(encoded, f.name)) for f in dataclasses.fields(encoded)}
    return dataclasses.replace(encoded, **changes), pairs


def _decode_in_blocks(model: Seq2Seq, encoded: Any, tgt_in: Tensor,
                      size: int) -> list[tuple[int, Tensor]]:
    """The decoder's features (K, n, F) of each block of `size` steps with its first step,
    each block run from the state the one before left (a decoder's `run` continues a state:
    what stepwise decoding relies on)."""
    decoder = model.decoder
    embedded = decoder.dropout(decoder.embedding(tgt_in))                  # (K, T, E)
    state = decoder.start(encoded)
    found = []
    for rows in _runs(int(tgt_in.shape[1]), size):
        features, _, state = decoder.run(embedded[:, rows], state)
        found.append((int(rows.start), features))
    return found


def _output_gradient(model: Seq2Seq, features: Tensor, tgt_out: Tensor) -> Tensor:
    """d log p(y_t) / d f_t (K, T, F) from the output layer alone: each step's
    log-probability reads its own features only, so one backward of their sum gives every
    step's."""
    features = features.detach().requires_grad_(True)
    logits = model.decoder.output(model.decoder.dropout(features))
    chosen = chosen_log_probs(model, logits, tgt_out)                        # (K, T)
    (grad,) = torch.autograd.grad(chosen.sum(), features)
    return grad


def batched_grad(outputs: Sequence[Tensor], inputs: Sequence[Tensor],
                 grads: Sequence[Tensor]) -> list[Tensor | None]:
    """torch.autograd.grad once per grad_outputs of a batch (their first axis), batched:
    each input's gradient (n, *input.shape), None for an input the outputs do not read. A
    backward that vmap cannot batch (the fused LSTMN's writes with out=; local-m with window 0
    meets a sparse tensor) runs once per grad_outputs instead: an error of its own shows there
    again."""
    try:
        return list(torch.autograd.grad(list(outputs), list(inputs), list(grads),
                                        retain_graph=True, allow_unused=True,
                                        is_grads_batched=True))
    except RuntimeError:
        pass
    each = [torch.autograd.grad(list(outputs), list(inputs), [grad[i] for grad in grads],
                                retain_graph=True, allow_unused=True)
            for i in range(int(grads[0].shape[0]))]                     # per row, per input
    return [None if found[0] is None else torch.stack(list(found))
            for found in zip(*each, strict=True)]                           # per input


@contextmanager
def replaced_output(layer: nn.Module, output: Tensor) -> Iterator[None]:
    """`layer` returns `output` instead of what it computes."""
    handle = layer.register_forward_hook(lambda _module, _inputs, _out: output)
    try:
        yield
    finally:
        handle.remove()
