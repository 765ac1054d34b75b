"""Misuse gets a ValueError that names the score and the dimensions."""

import pytest
import torch

from attnlab.attention import Attention, HardAttention, LocalAttention


@pytest.mark.parametrize("name", ["dot", "scaled_dot", "cosine"])
def test_direct_scores_need_equal_query_and_key_sizes(name):
    with pytest.raises(ValueError, match=rf"{name}.*query_dim=4.*key_dim=6"):
        Attention(name, query_dim=4, key_dim=6)


def test_location_needs_max_len():
    with pytest.raises(ValueError, match="location.*max_len"):
        Attention("location", query_dim=4, key_dim=4)


def test_location_refuses_more_keys_than_max_len():
    attention = Attention("location", query_dim=4, key_dim=4, max_len=5)
    with pytest.raises(ValueError, match="location.*6 keys.*max_len=5"):
        attention(torch.randn(1, 4), torch.randn(1, 6, 4))


@pytest.mark.parametrize("mask_shape", [(2, 4), (3, 5), (2, 3, 4)])
def test_mask_must_match_the_keys(mask_shape):
    attention = Attention("general", query_dim=4, key_dim=3)
    message = r"'general'.*mask shape .* does not match keys \(2, 5, 3\)"
    with pytest.raises(ValueError, match=message):
        attention(torch.randn(2, 2, 4), torch.randn(2, 5, 3),
                  mask=torch.ones(mask_shape, dtype=torch.bool))


def test_mask_must_be_bool():
    attention = Attention("dot", query_dim=3, key_dim=3)
    with pytest.raises(ValueError, match="mask must be bool"):
        attention(torch.randn(2, 3), torch.randn(2, 5, 3), mask=torch.ones(2, 5))


def test_wrong_query_or_key_size_names_the_score():
    attention = Attention("additive", query_dim=4, key_dim=3)
    with pytest.raises(ValueError, match=r"additive score was built for query_dim=4, key_dim=3"):
        attention(torch.randn(2, 5), torch.randn(2, 5, 3))
    with pytest.raises(ValueError, match=r"additive score .* keys \(2, 5, 7\)"):
        attention(torch.randn(2, 4), torch.randn(2, 5, 7))


def test_unknown_score_lists_the_options():
    with pytest.raises(ValueError, match=r"unknown score 'bilinear'.*additive"):
        Attention("bilinear", query_dim=4, key_dim=4)


def test_values_must_match_keys():
    with pytest.raises(ValueError, match="values"):
        Attention("dot", query_dim=3, key_dim=3)(torch.randn(2, 3), torch.randn(2, 5, 3),
                                                 torch.randn(2, 4, 3))


def test_local_window_must_be_valid():
    with pytest.raises(ValueError, match="local-p.*window"):
        LocalAttention("dot", window=0, predictive=True, query_dim=3, key_dim=3)
    with pytest.raises(ValueError, match="local-m.*window"):
        LocalAttention("dot", window=-1, predictive=False, query_dim=3, key_dim=3)


def test_hard_attention_options_are_checked():
    with pytest.raises(ValueError, match="expectation_prob"):
        HardAttention("dot", query_dim=3, key_dim=3, expectation_prob=1.5)
