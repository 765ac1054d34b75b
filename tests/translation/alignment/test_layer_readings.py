"""A Transformer read per layer and head (alignment/layer_views.py, layer_readings.py) on tiny
random models: the views and readings it names, the last layer's average as today's attention,
the per-head and per-layer norms held to a loop written from Kobayashi et al. (2020) in float64,
and no layer view for a recurrent decoder."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from attnlab.data.vocab import build_vocab
from attnlab.explain.explanation import ForcedText
from attnlab.models import Seq2Seq
from attnlab.translation.alignment import AlignmentSet, GoldSet
from attnlab.translation.alignment.extractions import extraction_scores, unit_views
from attnlab.translation.alignment.layer_readings import (
    PER_VIEW,
    layer_place,
    layer_readings,
    readings_of,
)
from attnlab.translation.alignment.layer_views import layer_views
from attnlab.translation.alignment.readings import READINGS, end_view
from attnlab.translation.corpus import Vocabularies
from models.variants import tiny_model

SOURCES = ["14 mars 1998", "2 mai 03"]
TARGETS = ["1998-03-14", "2003-05-02"]


@dataclass
class CharacterRun:
    """What alignment asks of a run (AlignableRun), for a model built here."""

    model: Seq2Seq
    vocabs: Vocabularies
    config: None = None
    has_attention: bool = True
    character_level: bool = True


def vocabularies() -> Vocabularies:
    return Vocabularies(build_vocab("char", SOURCES, size=None, name="src"),
                        build_vocab("char", TARGETS, size=None, name="tgt"))


def tiny_run(decoder: str = "transformer", *, layers: int = 2, heads: int = 3,
             seed: int = 0) -> CharacterRun:
    """A random float64 model in eval mode over character vocabularies, d_model 6."""
    vocabs = vocabularies()
    model = tiny_model(len(vocabs.src), len(vocabs.tgt), decoder, layers=layers, heads=heads,
                       seed=seed)
    return CharacterRun(model, vocabs)


def pair(run: CharacterRun, index: int = 0) -> ForcedText:
    return ForcedText.of(run.vocabs.src, run.vocabs.tgt, SOURCES[index], TARGETS[index])


def test_every_layer_and_head_is_named_and_read_by_every_reading_of_a_view():
    run = tiny_run(layers=2, heads=3)
    views = unit_views(run, SOURCES[0], TARGETS[0], [], 4, characters=True)
    places = [f"L{layer}{head}" for layer in (1, 2) for head in ("", "H1", "H2", "H3")]
    assert {*places, *(f"{place} norm" for place in places)} <= set(views)
    units = (len(TARGETS[0]), len(SOURCES[0]))
    assert all(views[place].shape == units for place in places)
    assert all(views[end_view(place)].shape == (1, units[1]) for place in places)
    found = layer_readings(views)
    assert list(found) == [f"{reading} @ {place}" for place in places for reading in PER_VIEW]
    assert {"attention, row t+1 @ L2H3", "attention x value norm @ L1",
            "attention >= 0.3 @ L1H2", "attention @ L2"} <= set(found)
    every = readings_of(views)
    assert list(every)[0] == "attention" and "diagonal" in every and len(every) == len(
        found) + len([name for name in READINGS if all(n in views for n in READINGS[name].needs)])
    assert layer_place("attention, row t+1 @ L2H3") == {
        "reading": "attention, row t+1", "layer": 2, "head": 3}
    assert layer_place("attention @ L1") == {"reading": "attention", "layer": 1, "head": None}
    assert layer_place("attention, row t+1") is None and layer_place("erasure @ L1") is None


def test_the_last_layers_average_is_todays_attention_exactly():
    run = tiny_run(layers=3, heads=2, seed=1)
    for index in range(len(SOURCES)):
        views = unit_views(run, SOURCES[index], TARGETS[index], [], 4, characters=True)
        assert np.array_equal(views["L3"], views["attention"])
        assert np.array_equal(views[end_view("L3")], views[end_view("attention")])
        assert not np.array_equal(views["L1"], views["attention"])   # (another layer's)
        units = views["attention"].shape
        for name in ("attention", "attention >= 0.3", "attention, row t+1"):
            assert (READINGS[name].links(views, units)
                    == readings_of(views)[f"{name} @ L3"].links(views, units))


def norms_loop(model: Seq2Seq, forced: ForcedText) -> dict[str, np.ndarray]:
    """The norm views one layer, head, step and source position at a time, from the
    definitions: f^h(h_j) = W_O[:, head h's columns] (W_V[head h's rows] h_j + b_V[its rows]);
    a head's view alpha^h_tj ||f^h(h_j)||, a layer's || sum_h alpha^h_tj f^h(h_j) ||."""
    src = torch.tensor([[*forced.source_ids, 3]])    # EOS appended as batching does
    tgt_in = torch.tensor([[2, *forced.target_ids]])  # BOS first
    mask = torch.ones_like(src, dtype=torch.bool)
    with torch.no_grad():
        heads = model.all_positions(src, mask, tgt_in).heads[0]          # (L, H, T, S)
        states = model.encode(src, mask).annotations[0]                     # (S, D)
        return _loop(model, heads, states)


def _loop(model: Seq2Seq, heads: torch.Tensor, states: torch.Tensor) -> dict[str, np.ndarray]:
    found = {}
    for layer, block in enumerate(model.decoder.layers):
        attention = block.cross_attention
        w_v, b_v = attention.value_proj.weight, attention.value_proj.bias
        w_o, size = attention.output_proj.weight, attention.head_dim
        steps, sources = heads.shape[2:]
        whole = np.zeros((steps, sources))
        each = np.zeros((heads.shape[1], steps, sources))
        for t in range(steps):
            for j in range(sources):
                total = torch.zeros(w_o.shape[0], dtype=torch.float64)
                for h in range(heads.shape[1]):
                    rows = slice(h * size, (h + 1) * size)
                    f = w_o[:, rows] @ (w_v[rows] @ states[j] + b_v[rows])
                    alpha = heads[layer, h, t, j]
                    each[h, t, j] = float(alpha * f.norm())
                    total += alpha * f
                whole[t, j] = float(total.norm())
        found[f"L{layer + 1} norm"] = whole
        found |= {f"L{layer + 1}H{h + 1} norm": each[h] for h in range(len(each))}
    return found


def test_the_per_head_and_per_layer_norms_are_the_loops_in_float64():
    run = tiny_run(layers=2, heads=3, seed=2)
    forced = pair(run)
    views = layer_views(run.model, forced)
    expected = norms_loop(run.model, forced)
    assert expected.keys() <= views.keys()
    for name, values in expected.items():
        np.testing.assert_allclose(views[name], values, rtol=1e-10, atol=1e-12, err_msg=name)
    # a head's norm is not its weight: the value's length moves it
    assert not np.allclose(views["L1H1 norm"] / views["L1H1 norm"].max(),
                           views["L1H1"] / views["L1H1"].max())


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
def test_a_recurrent_decoder_gets_no_layer_views_and_no_layer_readings(decoder):
    run = tiny_run(decoder)
    assert layer_views(run.model, pair(run)) == {}
    views = unit_views(run, SOURCES[0], TARGETS[0], [], 4, characters=True)
    assert "attention" in views and not layer_readings(views)
    assert not any(" @ " in name for name in readings_of(views))


def test_the_extraction_record_holds_every_layer_reading_and_says_what_each_reads():
    run = tiny_run(layers=2, heads=2)
    gold = GoldSet("two dates", SOURCES, TARGETS,
                   [AlignmentSet(frozenset({(0, 0), (1, 1)}), frozenset()),
                    AlignmentSet(frozenset({(0, 8), (0, 9)}), frozenset())], kind="dates")
    scores = extraction_scores(run, gold, methods=[])
    record = scores.to_dict()
    assert record["pairs"] == 2 and record["skipped"] == 0
    layered = {name for name in record["counts"] if " @ " in name}
    assert len(layered) == 2 * 3 * len(PER_VIEW) and set(record["layers"]) == layered
    assert record["layers"]["attention x value norm @ L2H1"] == {
        "reading": "attention x value norm", "layer": 2, "head": 1}
    assert record["counts"]["attention @ L2"] == record["counts"]["attention"]
    assert all(0 <= value <= 1 for value in record["aer"].values())
