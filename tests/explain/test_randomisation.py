"""The model-randomisation sanity check (attnlab.explain.randomisation) where its answer is
known, through either kind of forced reading.

- An attention that no weight decides survives exactly: local-m with a window of half-width 0
  puts all of step t's weight on source position t whatever the parameters, so its trained and
  randomised rows rank the positions alike: tau 1 at every step.
- An attention that the weights alone decide is forgotten: the hand-built models' location
  score puts all the weight on one position through one row of its position logits; randomised,
  those rows are independent draws alike for every position, so no position is favoured and
  the expected tau is 0 by symmetry (a mean over 60 fresh draws within 0.2 of it).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.explain.forced import ForcedSentence, ForcedTranslation
from attnlab.explain.randomisation import randomised, survival, views
from attnlab.models import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig, build_model

from . import test_faithfulness as translation
from . import test_self_attention as lstmn


def test_every_parameter_is_drawn_afresh_and_put_back_even_after_an_error():
    model = translation.hand_built(True)
    trained = {name: p.detach().clone() for name, p in model.named_parameters()}
    with pytest.raises(RuntimeError, match="inside"), \
            randomised(model, torch.Generator().manual_seed(0)):
        for name, parameter in model.named_parameters():
            scale = trained[name].pow(2).mean().sqrt()
            assert not torch.equal(parameter, trained[name]) or scale == 0, name
        assert (model.encoder.embedding.weight[0] == 0).all()      # padding: the baseline
        raise RuntimeError("inside")
    for name, parameter in model.named_parameters():
        assert torch.equal(parameter, trained[name]), name


def test_the_same_seed_draws_the_same_model():
    model = translation.hand_built(True)
    drawn = []
    for _ in range(2):
        with randomised(model, torch.Generator().manual_seed(7)):
            drawn.append([p.detach().clone() for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*drawn, strict=True))


def local_m_window_0() -> torch.nn.Module:
    torch.manual_seed(0)
    config = ModelConfig(
        encoder=EncoderConfig(embedding_dim=6, hidden_dim=4, dropout=0.0),
        decoder=DecoderConfig(kind="luong", embedding_dim=6, hidden_dim=8, dropout=0.0,
                              attention=AttentionConfig("general", mechanism="local-m",
                                                        window=0)))
    return build_model(config, 12, 12, max_src_len=10).double().eval()


def test_an_attention_no_weight_decides_survives_randomisation():
    pair = ForcedTranslation.of(local_m_window_0(), [4, 5, 6, 7, 8], [5, 6, 7])
    trained = views(pair, ["gradient"], 1)
    assert (trained["attention"].max(-1) == 1.0).all()               # one position per step
    found = survival(pair, trained, torch.Generator().manual_seed(0), 1)
    assert found["attention"].tolist() == [1.0] * 4                  # rows 0..3, weight at t
    assert found["gradient"].shape == (4,) and not np.allclose(found["gradient"], 1.0)


@pytest.mark.parametrize("kind", ["translation", "lstmn"])
def test_an_attention_the_weights_decide_is_forgotten_by_symmetry(kind):
    if kind == "translation":
        forced = translation.pair_with_distinct_first(translation.hand_built(True))
    else:
        forced = ForcedSentence.of(lstmn.hand_built(True), lstmn.WORDS)
    trained = views(forced, [], 1)
    generator = torch.Generator().manual_seed(0)
    means = [np.nanmean(survival(forced, trained, generator, 1)["attention"])
             for _ in range(60)]
    assert abs(np.mean(means)) < 0.2
    assert np.std(means) > 0.1                 # the draws differ: each a fresh model
