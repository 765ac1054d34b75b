"""The attributions held to loop references written from their definitions, in float64, on
small random models of every decoder and mechanism kind."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.explain.attribution import ForcedPair, attribute, source_embedding, step_log_probs
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model

VOCAB = 12
KINDS = [("bahdanau", AttentionConfig("additive", hidden_dim=6)),
         ("luong", AttentionConfig("general")),
         ("luong", AttentionConfig("location", max_len=16)),
         ("luong", AttentionConfig("general", mechanism="local-p", window=2)),
         ("luong", AttentionConfig("dot", mechanism="hard")),
         ("none", AttentionConfig())]


def tiny_model(kind: str, attention: AttentionConfig, seed: int = 0):
    torch.manual_seed(seed)
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=5, hidden_dim=4, dropout=0.0),
        decoder=DecoderConfig(kind=kind, embedding_dim=5, hidden_dim=8, dropout=0.0,
                              attention=attention))
    return build_model(config, VOCAB, VOCAB, max_src_len=16).double().eval()


def log_probs_with(model, pair: ForcedPair, embedded: torch.Tensor) -> torch.Tensor:
    """log p(y_t) (T,) with the source embedding's output replaced by `embedded` (1, S, E)."""
    handle = source_embedding(model).register_forward_hook(lambda *_: embedded)
    try:
        return step_log_probs(model, pair.src, pair.src_mask, pair.tgt_in, pair.tgt_out)[0]
    finally:
        handle.remove()


def reference(model, pair: ForcedPair, method: str, steps: int = 32) -> np.ndarray:
    """The definitions, one target step and one source position at a time."""
    base = source_embedding(model)(pair.src).detach()            # (1, S, E)
    T, S = pair.steps, pair.positions
    out = np.zeros((T, S))
    if method == "erasure":
        full = log_probs_with(model, pair, base).detach()
        for s in range(S):
            erased = base.clone()
            erased[0, s] = 0.0
            out[:, s] = (full - log_probs_with(model, pair, erased).detach()).numpy()
        return out
    if method == "gradient":
        points, weights = [1.0], [1.0]
    else:  # integrated gradients with Gauss-Legendre points on [0, 1]
        nodes, gl_weights = np.polynomial.legendre.leggauss(steps)
        points, weights = list((nodes + 1) / 2), list(gl_weights / 2)
    for t in range(T):
        total = torch.zeros_like(base)
        for alpha, weight in zip(points, weights, strict=True):
            x = (alpha * base).requires_grad_(True)
            (grad,) = torch.autograd.grad(log_probs_with(model, pair, x)[t], x)
            total += weight * grad
        out[t] = (total * base).sum(-1)[0].numpy()
    return out


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(range(len(KINDS))), method=st.sampled_from(
    ["gradient", "integrated_gradients", "erasure"]),
    source=st.lists(st.integers(4, VOCAB - 1), min_size=1, max_size=6),
    target=st.lists(st.integers(4, VOCAB - 1), min_size=0, max_size=5))
def test_each_attribution_is_its_definition(kind, method, source, target):
    model = tiny_model(*KINDS[kind])
    pair = ForcedPair.of(source, target, torch.device("cpu"))
    fast = attribute(model, pair, method, steps=8, tolerance=None)   # one 8-point rule
    assert fast.shape == (len(target) + 1, len(source) + 1)
    np.testing.assert_allclose(fast, reference(model, pair, method, steps=8), atol=1e-9)


def test_integrated_gradients_rows_are_complete():
    """A row sums to log p(y_t | x) - log p(y_t | zero embeddings) (Sundararajan et al.)."""
    model = tiny_model("luong", AttentionConfig("general"))
    pair = ForcedPair.of([4, 5, 6, 7, 8], [9, 10, 11], torch.device("cpu"))
    rows = attribute(model, pair, "integrated_gradients", steps=32, tolerance=None).sum(1)
    base = source_embedding(model)(pair.src).detach()
    gap = (log_probs_with(model, pair, base) - log_probs_with(model, pair, 0 * base)).detach()
    np.testing.assert_allclose(rows, gap.numpy(), atol=1e-8)


def test_attribution_leaves_the_model_as_it_was():
    model = tiny_model("bahdanau", AttentionConfig("additive", hidden_dim=6)).train()
    before = {name: p.clone() for name, p in model.named_parameters()}
    attribute(model, ForcedPair.of([4, 5], [6], torch.device("cpu")), "integrated_gradients")
    assert model.training
    assert all(p.requires_grad and p.grad is None for p in model.parameters())
    assert all(torch.equal(before[name], p) for name, p in model.named_parameters())


def test_an_unknown_method_is_named():
    model = tiny_model("luong", AttentionConfig("dot"))
    with pytest.raises(ValueError, match="saliency"):
        attribute(model, ForcedPair.of([4], [5], torch.device("cpu")), "saliency")
