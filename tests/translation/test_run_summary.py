"""What a run report says about its run: a title in words, curves grouped into few charts, and
files named without the machine's paths."""

from pathlib import Path

import pytest

from attnlab.config import load_config
from attnlab.data import write_dates
from attnlab.translation import RunConfig
from attnlab.translation.run_summary import (
    PathNames,
    curve_charts,
    data_words,
    model_words,
    own_metric_is_exact_match,
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


def test_a_data_folder_called_data_is_named_by_what_it_holds(tmp_path):
    """The demo's data is runs/demo/data: its meta.json names the task; without one the
    folder above names it. Never the bare "data"."""
    dates = {"dir": str(tmp_path / "demo" / "data"), "src_lang": "src", "tgt_lang": "tgt",
             "vocab": "char"}
    assert data_words(config(data=dates)) == "demo/data, characters"
    write_dates(tmp_path / "demo" / "data", size=20, seed=1)
    assert data_words(config(data=dates)) == "dates task, characters"
    assert data_words(config(data={"dir": "data"})).startswith(f"{Path.cwd().name}/data ")


def test_exact_match_is_the_metric_of_dates_runs_asked_of_the_data_or_the_run(tmp_path):
    renamed = tmp_path / "my-corpus"   # the dates task whatever its folder is called
    write_dates(renamed, size=20, seed=1)
    assert own_metric_is_exact_match(config(data={"dir": str(renamed)}))
    (tmp_path / "dates").mkdir()       # a folder called dates holding something else
    assert not own_metric_is_exact_match(config(data={"dir": str(tmp_path / "dates")}))
    assert not own_metric_is_exact_match(config())
    chosen = load_config({"data": DATA, "train": {"early_stopping": {"metric": "exact_match"}}},
                         RunConfig)    # the run picks its best checkpoint by it
    assert own_metric_is_exact_match(chosen)


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
