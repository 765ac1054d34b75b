"""The batched gradients (attnlab.explain.gradients) against captum's path, the way attnlab
computed them before (reference_attribution.py), in float64 on small random models of every
decoder, score and mechanism, on every encoder (the Transformer's too, and a Transformer encoder
under a recurrent decoder), however the batches fall."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.explain import gradients
from attnlab.explain.attribution import ForcedPair, attribution
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model

from .reference_attribution import reference_attribute

VOCAB = 12
# (encoder kind, decoder kind, input feeding, attention): every decoder, score and mechanism
MODELS = [("rnn", "bahdanau", True, AttentionConfig("additive", hidden_dim=6)),
          ("rnn", "bahdanau", True, AttentionConfig("concat", hidden_dim=6)),
          ("rnn", "luong", True, AttentionConfig("general")),
          ("rnn", "luong", False, AttentionConfig("dot")),
          ("rnn", "luong", True, AttentionConfig("scaled_dot")),
          ("rnn", "luong", False, AttentionConfig("cosine")),
          ("rnn", "luong", True, AttentionConfig("location", max_len=16)),
          ("rnn", "luong", True, AttentionConfig("general", mechanism="local-m", window=1)),
          ("rnn", "luong", True, AttentionConfig("general", mechanism="local-m", window=0)),
          ("rnn", "luong", False, AttentionConfig("additive", mechanism="local-p", window=2)),
          ("rnn", "bahdanau", True, AttentionConfig("additive", mechanism="local-p", window=1)),
          ("rnn", "luong", True, AttentionConfig("dot", mechanism="hard")),
          ("rnn", "none", True, AttentionConfig()),
          ("transformer", "transformer", True, AttentionConfig("scaled_dot")),
          ("transformer", "luong", True, AttentionConfig("general")),
          ("lstmn", "bahdanau", True, AttentionConfig("additive", hidden_dim=6)),
          ("lstmn", "luong", False, AttentionConfig("general"))]
PAIRS = [([4, 5, 6, 7, 8, 9, 10], [11, 4, 9, 5, 6, 7]), ([5], [6, 7]), ([4, 8, 11], [])]


TRANSFORMER = {"embedding_dim": 8, "hidden_dim": 8, "layers": 2, "heads": 2, "ff_dim": 12}


def model_of(encoder: str, decoder: str, feeding: bool, attention: AttentionConfig,
             seed: int = 0):
    """A float64 model in eval mode; a Transformer side 2 layers x 2 heads, d_model 8."""
    torch.manual_seed(seed)
    enc = (EncoderConfig(kind=encoder, dropout=0.0, **TRANSFORMER)
           if encoder == "transformer" else
           EncoderConfig(kind=encoder, embedding_dim=5, hidden_dim=4, dropout=0.0,
                         bidirectional=encoder == "rnn"))
    dec = (DecoderConfig(kind=decoder, dropout=0.0, attention=attention, **TRANSFORMER)
           if decoder == "transformer" else
           DecoderConfig(kind=decoder, embedding_dim=5, hidden_dim=8, dropout=0.0,
                         input_feeding=feeding, attention=attention))
    return build_model(ModelConfig(encoder=enc, decoder=dec), VOCAB, VOCAB,
                       max_src_len=16).double().eval()


def label(case) -> str:
    encoder, decoder, feeding, attention = case
    return (f"{encoder}-{decoder}{'' if feeding else '-nofeed'}-{attention.score}-"
            f"{attention.mechanism}")


@pytest.fixture(params=[(1, 1), (2**11, 2**9), (2**30, 2**30)],
                ids=["one-by-one", "some-together", "all-together"])
def batching(request, monkeypatch):
    """Every way the batches can fall: one point per forward and one row per backward, a few
    of each (blocks of steps that split the target), and all at once."""
    forward, backward = request.param
    monkeypatch.setattr(gradients, "FORWARD_CELLS", forward)
    monkeypatch.setattr(gradients, "BACKWARD_CELLS", backward)


@pytest.mark.parametrize("case", MODELS, ids=label)
def test_gradients_match_captums_path(case, batching):
    model = model_of(*case)
    for source, target in PAIRS:
        pair = ForcedPair.of(source, target, torch.device("cpu"))
        for method, steps in (("gradient", 1), ("integrated_gradients", 6)):
            found = attribution(model, pair, method, steps=steps, tolerance=None).values
            expected = reference_attribute(model, pair, method, steps=steps)
            assert found.shape == (len(target) + 1, len(source) + 1)
            np.testing.assert_allclose(found, expected, rtol=0, atol=1e-5,
                                       err_msg=f"{method} {source} -> {target}")
            assert np.abs(found).max() > 1e-6   # something to compare
