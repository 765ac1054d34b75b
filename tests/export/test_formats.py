"""Run directories of the format before the current one (2: attention as the switches window /
predictive / hard, the language-model task "language_model") load for every command that reads
a run; anything older is refused in one sentence."""

import json
import shutil

import pytest

import attnlab
from attnlab.cli import main
from attnlab.errors import CheckpointError
from attnlab.hub import export_model
from attnlab.recipes import RECIPES, recipe_of_run
from attnlab.serve.runs import load_served
from attnlab.train import RunDir
from attnlab.train.formats import upgrade_config
from attnlab.translation import TranslationRun

LINES = ["14 March 1998", "2001-07-04"]


def switches(attention: dict) -> dict:
    """An attention section as format 2 wrote it (every key, as config_to_dict gave them)."""
    section = {key: value for key, value in attention.items() if key != "mechanism"}
    mechanism = attention.get("mechanism", "global")
    return {**section, "predictive": mechanism == "local-p", "hard": mechanism == "hard"}


def format_2(data):
    if not isinstance(data, dict):
        return data
    found = {key: format_2(value) for key, value in data.items()}
    if isinstance(found.get("attention"), dict) and "mechanism" in found["attention"]:
        found["attention"] = switches(found["attention"])
    return found


def as_format_2(run, folder):
    """A copy of `run` written as format 2 wrote it: config.json and each meta.json."""
    old = folder / f"{run.name}-format-2"
    shutil.copytree(run, old)
    config = json.loads((old / "config.json").read_text())
    (old / "config.json").write_text(json.dumps(format_2(config), indent=2))
    for meta_file in old.glob("*/meta.json"):
        meta = json.loads(meta_file.read_text())
        signature = meta["signature"]
        signature["model"] = format_2(signature["model"])
        if signature["task"] == "lm":
            signature["task"] = "language_model"
        meta_file.write_text(json.dumps({**meta, "format_version": 2}, indent=2))
    return old


@pytest.mark.parametrize(("attention", "mechanism"), [
    ({"score": "general", "window": 10, "predictive": True, "hard": False}, "local-p"),
    ({"score": "general", "window": 10, "predictive": False, "hard": False}, "local-m"),
    ({"score": "additive", "window": None, "predictive": False, "hard": True}, "hard"),
    ({"score": "dot", "window": None, "predictive": False, "hard": False}, "global"),
    # format 2 trained global attention for predictive without a window: so it is named
    ({"score": "dot", "window": None, "predictive": True, "hard": False}, "global"),
])
def test_format_2_switches_are_read_as_the_mechanism_they_trained(attention, mechanism):
    config = {"model": {"decoder": {"attention": attention}}}
    upgraded = upgrade_config(config)["model"]["decoder"]["attention"]
    assert upgraded["mechanism"] == mechanism
    assert "predictive" not in upgraded and "hard" not in upgraded
    assert upgraded["window"] == attention["window"]


def test_a_format_2_translation_run_reads_as_it_did(dates_run, exported, tmp_path, capsys):
    old = as_format_2(dates_run, tmp_path)
    assert [r.text for r in TranslationRun.load(old).translate(LINES)] == \
        [r.text for r in TranslationRun.load(dates_run).translate(LINES)]
    assert TranslationRun.load(old).config == TranslationRun.load(dates_run).config
    for argv in (["translate", "--run", old, "--input", "/dev/null"],
                 ["evaluate", "--run", old, "--output", tmp_path / "scores.json"],
                 ["plot", "--run", old, LINES[0], "--output", tmp_path / "a.png"],
                 ["report", "--run", old, "--output", tmp_path / "report.html"]):
        assert main([str(part) for part in argv]) == 0, capsys.readouterr().err
    assert (tmp_path / "a.png").is_file() and (tmp_path / "report.html").is_file()
    served = load_served("old", old)
    assert served.mechanism == load_served("new", dates_run).mechanism
    model = export_model(old, tmp_path / "exported").path
    assert json.loads((model / "best/meta.json").read_text())["format_version"] == 3
    assert "mechanism" in json.loads((model / "config.json").read_text())["model"]["decoder"][
        "attention"]
    assert [r.text for r in attnlab.load(model).translate(LINES)] == \
        [r.text for r in TranslationRun.load(dates_run).translate(LINES)]


def test_a_format_2_language_model_run_is_an_lm_run(lm_run, tmp_path):
    old = as_format_2(lm_run, tmp_path)
    assert recipe_of_run(old) is RECIPES["lm"]
    assert attnlab.load(old).perplexity(["the cat sees the dog ."]).perplexity == \
        pytest.approx(attnlab.load(lm_run).perplexity(["the cat sees the dog ."]).perplexity)


def test_a_format_2_captioning_run_loads(caption_run, tmp_path):
    old = as_format_2(caption_run, tmp_path)
    assert load_served("old", old).mechanism == load_served("new", caption_run).mechanism


def test_an_older_format_is_refused_in_one_sentence(dates_run, tmp_path):
    old = tmp_path / "format-1"
    shutil.copytree(dates_run, old)
    meta_file = old / "best/meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["files"], meta["format_version"]
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"best is in run format 1; this attnlab reads "
                                              r"formats 2 to 3: train it again"):
        RunDir(old).read_meta("best")
