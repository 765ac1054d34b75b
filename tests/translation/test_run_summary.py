"""What a run report says about its run: a title in words, curves grouped into few charts, and
files named without the machine's paths."""

from pathlib import Path

import pytest

from attnlab.config import load_config
from attnlab.translation import RunConfig
from attnlab.translation.run_summary import (
    PathNames,
    curve_charts,
    data_words,
    model_words,
    shown_config,
)

DATA = {"dir": "data/multi30k", "src_lang": "de", "tgt_lang": "en"}


def config(decoder=None, encoder=None, data=None) -> RunConfig:
    model = {"encoder": {"hidden_dim": 256, **(encoder or {})},
             "decoder": {"hidden_dim": 512, **(decoder or {})}}
    return load_config({"data": {**DATA, **(data or {})}, "model": model}, RunConfig)


@pytest.mark.parametrize(("decoder", "encoder", "words"), [
    ({"kind": "bahdanau"}, {}, "Bahdanau attention (additive, global), bi-GRU 2x256 -> GRU 512"),
    ({"kind": "luong", "attention": {"score": "general", "mechanism": "local-p", "window": 10}},
     {"rnn": "lstm", "bidirectional": False, "layers": 2}, "Luong attention (general, local-p "
     "(D=10)), LSTM 256, 2 layers -> GRU 512"),
    ({"kind": "none"}, {}, "no attention, bi-GRU 2x256 -> GRU 512"),
])
def test_model_in_words(decoder, encoder, words):
    assert model_words(config(decoder, encoder)) == words


def test_data_in_words():
    assert data_words(config()) == "Multi30k de-en"
    dates = {"dir": "/somewhere/dates", "src_lang": "src", "tgt_lang": "tgt", "vocab": "char"}
    assert data_words(config(data=dates)) == "dates task, characters"


def test_loss_together_scores_together_constant_lr_left_out():
    curves = {"train loss": [(50, 4.0), (100, 3.0)], "train lr": [(50, 1e-3), (100, 1e-3)],
              "valid loss": [(100, 3.5)], "valid perplexity": [(100, 33.1)],
              "valid bleu": [(100, 9.0)], "valid chrf": [(100, 30.0)],
              "valid exact_match": [(100, 0.2)], "valid other": [(100, 1.0)]}
    charts = curve_charts(curves, "bleu")
    assert [chart.title for chart in charts] == ["Loss per target token",
                                                 "Validation BLEU, chrF", "valid other"]
    assert list(charts[0].series) == ["training", "validation"]
    assert "33.10" in charts[0].caption and "BLEU" in charts[1].caption


def test_a_changing_lr_and_the_exact_match_that_picks_the_best_are_drawn():
    curves = {"train lr": [(50, 1e-3), (100, 5e-4)], "valid bleu": [(100, 9.0)],
              "valid exact_match": [(100, 0.0)]}
    charts = curve_charts(curves, "exact_match")
    assert [chart.title for chart in charts] == ["Validation BLEU, exact match %",
                                                 "Learning rate"]


def test_paths_are_shown_inside_the_run_or_by_name(tmp_path):
    names = PathNames(tmp_path / "run")
    assert names.show(tmp_path / "run" / "best" / "meta.json") == "best/meta.json"
    assert names.show(tmp_path / "data" / "val.de.gz") == "val.de.gz"
    text = f"RWTH de-en gold ({tmp_path}/gold/rwth) and </s> of {tmp_path}/x/val.align"
    assert names.hide(text) == "RWTH de-en gold (rwth) and </s> of val.align"
    assert str(tmp_path) not in names.hide(f"no such file: {tmp_path}/a b/c")  # cut at a space
    assert shown_config({"data": {"dir": str(tmp_path / "dates"), "src": "a/b"}}, names) == {
        "data": {"dir": "…/dates", "src": "a/b"}}
    assert names.pair(Path("a/val.de"), None) == "val.de / its references"
