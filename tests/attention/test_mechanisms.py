"""Mechanisms built from a Score: the name form and the built form agree, scores declare what
they need, and the MECHANISMS table builds each kind."""

import pytest
import torch

from attnlab.attention import (
    SCORES,
    Attention,
    HardAttention,
    LocalAttention,
    MechanismOptions,
    ScoreDims,
    build_mechanism,
    build_score,
    mechanism_class,
    score_class,
)
from attnlab.attention.scores import unmet_need
from attnlab.models import AttentionConfig

from .problems import SAME_DIM_SCORES


@pytest.mark.parametrize("name", sorted(SCORES))
def test_a_built_score_and_its_name_give_the_same_attention(name):
    dims = {"query_dim": 4, "key_dim": 4 if name in SAME_DIM_SCORES else 6, "max_len": 9}
    torch.manual_seed(0)
    by_name = Attention(name, **dims)
    torch.manual_seed(0)
    built = Attention(build_score(name, ScoreDims(**dims)))
    query, keys = torch.randn(2, 3, 4), torch.randn(2, 7, dims["key_dim"])
    for a, b in zip(by_name(query, keys), built(query, keys), strict=True):
        torch.testing.assert_close(a, b)
    assert set(by_name.state_dict()) == set(built.state_dict())


@pytest.mark.parametrize("name", sorted(SCORES))
def test_a_score_says_what_it_needs_before_it_is_built(name):
    cls = score_class(name)
    unequal = ScoreDims(3, 5, max_len=4)
    if cls.needs_equal_dims:
        assert "query_dim == key_dim" in unmet_need(cls, unequal)
        with pytest.raises(ValueError, match="query_dim == key_dim"):
            build_score(name, unequal)
    else:
        build_score(name, unequal)  # builds: nothing to ask
    if cls.needs_max_len:
        assert "max_len" in unmet_need(cls, ScoreDims(3, 3))
        with pytest.raises(ValueError, match="max_len"):
            build_score(name, ScoreDims(3, 3))


def test_an_unknown_score_names_the_closest():
    with pytest.raises(ValueError, match="did you mean 'additive'"):
        score_class("addtive")


def test_sizes_go_with_a_name_not_with_a_built_score():
    score = build_score("general", ScoreDims(3, 5))
    with pytest.raises(TypeError, match="already built"):
        Attention(score, query_dim=3)


@pytest.mark.parametrize(("name", "kind"), [("global", Attention), ("local-m", LocalAttention),
                                            ("local-p", LocalAttention),
                                            ("hard", HardAttention)])
def test_the_mechanisms_table_builds_each_kind_around_the_score(name, kind):
    score = build_score("general", ScoreDims(4, 6))
    mechanism = build_mechanism(name, score, MechanismOptions(window=2, expectation_prob=0.3))
    assert type(mechanism) is kind and mechanism.score is score
    out = mechanism.attend(torch.randn(2, 4), torch.randn(2, 5, 6), first_step=1)
    assert out.context.shape == (2, 6) and out.weights.shape == (2, 5)
    assert (out.sample is not None) == (name == "hard")
    if kind is LocalAttention:
        assert mechanism.predictive == (name == "local-p")
    # what it is, asked of the module, of its class before one is built, and of a config
    assert mechanism_class(name) is kind
    assert mechanism.samples == kind.samples == (out.sample is not None)
    assert mechanism.local == kind.local == (name in ("local-m", "local-p"))
    config = AttentionConfig(mechanism=name, window=2 if mechanism.local else None)
    assert (config.hard, config.local) == (mechanism.samples, mechanism.local)


def test_an_unknown_mechanism_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown mechanism 'locale'"):
        build_mechanism("locale", build_score("dot", ScoreDims(2, 2)), MechanismOptions())
