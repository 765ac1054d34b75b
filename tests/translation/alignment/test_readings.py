"""The registry of readings (attnlab.translation.alignment.readings) on hand-built views with a
known answer, and the norm-based reading's ||W h_j|| held to the decoder's own layer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab.data.vocab import EOS_ID
from attnlab.models import AttentionConfig
from attnlab.translation.alignment import AlignmentSet, aer
from attnlab.translation.alignment.readings import READINGS, VERSION, end_view, readable
from attnlab.translation.alignment.value_norms import norm_weighted, value_norms
from explain.test_attribution import tiny_model  # small random models of every decoder

# 3 target units over 3 source units: attention's argmax 0, 1, 1
ATTENTION = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.2, 0.5, 0.3]])


def test_attention_and_its_rows_shifted():
    views = {"attention": ATTENTION}
    assert READINGS["attention"].links(views, (3, 3)) == {(0, 0), (1, 1), (1, 2)}
    # unit t takes row t-1's link: unit 0 has no row before it
    assert READINGS["attention, row t-1"].links(views, (3, 3)) == {(0, 1), (1, 2)}
    # unit t takes row t+1's link: the last unit has no row after it
    assert READINGS["attention, row t+1"].links(views, (3, 3)) == {(1, 0), (1, 1)}


def test_the_last_unit_is_read_at_the_end_row_where_the_views_hold_it():
    """Row t+1 of the last unit is the "</s>" row: the step whose input is that unit."""
    views = {"attention": ATTENTION, end_view("attention"): np.array([[0.1, 0.2, 0.7]])}
    assert READINGS["attention, row t+1"].links(views, (3, 3)) == {(1, 0), (1, 1), (2, 2)}
    assert READINGS["attention, row t-1"].links(views, (3, 3)) == {(0, 1), (1, 2)}
    assert READINGS["attention"].links(views, (3, 3)) == {(0, 0), (1, 1), (1, 2)}
    assert end_view("attention") not in readable(views)


def test_the_shifted_rows_find_a_row_labelled_one_step_off():
    """With attention's links equal to the gold, row t reads best; with every row one target
    unit late (an off-by-one labelling), the reading of row t+1 does."""
    gold = [AlignmentSet(frozenset(links), frozenset(links)) for links in
            ({(0, 0), (1, 1), (2, 2), (3, 3)}, {(1, 0), (0, 1), (2, 2), (3, 3)})]
    for offset, best in ((0, "attention"), (1, "attention, row t+1")):
        found = {}
        for name in ("attention, row t-1", "attention", "attention, row t+1"):
            links = []
            for pair in gold:
                weights = np.zeros((4, 4))
                for i, t in pair.sure:
                    if t + offset < 4:
                        weights[t + offset, i] = 1.0
                links.append(READINGS[name].links({"attention": weights}, (4, 4)))
            found[name] = aer(links, gold)
        assert all(value > found[best] for name, value in found.items() if name != best), found
    assert found["attention, row t+1"] < 0.2   # only the last unit's link fell off the end


def test_the_threshold_links_every_weight_above_it():
    assert READINGS["attention >= 0.3"].links({"attention": ATTENTION}, (3, 3)) == {
        (0, 0), (1, 1), (1, 2), (2, 2)}


def test_the_norm_reading_follows_what_a_position_contributes_not_its_weight():
    # Row 2 puts 0.5 on source 1, but source 1's state is all but erased by W (norm 0.1),
    # while source 2's (weight 0.3) is read at full strength (norm 1): the norm reading moves.
    norms = np.array([1.0, 0.1, 1.0])
    views = {"attention": ATTENTION, "norm": norm_weighted(ATTENTION, norms)}
    assert READINGS["attention"].links(views, (3, 3)) >= {(1, 2)}
    assert READINGS["attention x value norm"].links(views, (3, 3)) == {(0, 0), (0, 1), (2, 2)}


def test_an_attribution_is_read_by_its_magnitude():
    gradient = np.array([[0.1, -0.9, 0.2], [0.5, 0.0, -0.1], [0.0, 0.0, 0.0]])
    links = READINGS["gradient"].links({"gradient": gradient}, (3, 3))
    assert links == {(1, 0), (0, 1)}     # a row of zeros links to nothing


def test_a_reading_is_read_only_where_its_views_are():
    names = readable({"attention": ATTENTION})
    assert names[0] == "attention" and "diagonal" in names
    assert "gradient" not in names and "attention x value norm" not in names
    assert not any("reverse" in name or "both directions" in name for name in names)
    with_reverse = readable({"attention": ATTENTION, "reverse": ATTENTION.T})
    assert "attention, both directions intersected" in with_reverse
    assert readable({}) == ["diagonal"]
    assert READINGS["diagonal"].links({}, (3, 5)) == {(0, 0), (2, 1), (4, 2)}
    assert isinstance(VERSION, int)


def layer_reading(model, context: torch.Tensor) -> torch.Tensor:
    """What the decoder's first layer after attention adds for `context` (D,) alone, by calling
    that layer itself: Luong's W_c on [c; 0], Bahdanau's deep output on [0; 0; c] minus its
    bias."""
    decoder = model.decoder
    if hasattr(decoder, "combine"):
        hidden = decoder.combine.in_features - context.shape[0]
        return decoder.combine(torch.cat([context, context.new_zeros(hidden)]))
    width = decoder.readout.in_features - context.shape[0]
    zeros = context.new_zeros(width)
    return (decoder.readout(torch.cat([zeros, context]))
            - decoder.readout(torch.cat([zeros, torch.zeros_like(context)])))


@pytest.mark.parametrize("kind, attention", [
    ("bahdanau", AttentionConfig("additive", hidden_dim=6)),
    ("luong", AttentionConfig("general")),
    ("luong", AttentionConfig("general", mechanism="local-p", window=2)),
])
def test_value_norms_are_the_norms_of_what_the_decoders_layer_reads(kind, attention):
    model = tiny_model(kind, attention)
    ids = [3, 7, 5, 9]
    found = value_norms(model, ids)
    src = torch.tensor([[*ids, EOS_ID]])   # as the model reads a source
    with torch.no_grad():
        states = model.encode(src, torch.ones_like(src, dtype=torch.bool)).annotations[0]
        expected = [float(layer_reading(model, state).norm()) for state in states]
    assert found.shape == (len(ids) + 1,)
    np.testing.assert_allclose(found, expected, rtol=1e-10)


def test_a_decoder_without_attention_has_no_value_norms():
    with pytest.raises(ValueError, match="without attention"):
        value_norms(tiny_model("none", AttentionConfig()), [3, 4])
