"""`attnlab.load(path)`: a run or model directory as an object with its task's verbs, giving what
the recipes' own loaders give; the captioning and language-model commands read a model
directory as they read the run."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PIL import Image

import attnlab
from attnlab.captioning import CaptioningRun
from attnlab.cli import main
from attnlab.errors import CheckpointError
from attnlab.lm import LanguageModelRun, read_with_language_model
from attnlab.train import runs
from attnlab.translation import TranslationRun

LINES = ["14 March 1998", "", "2001-07-04", "le 3 juin 1987"]


def same_translations(ours, theirs):
    assert [r.text for r in ours] == [r.text for r in theirs]
    assert [r.score for r in ours] == pytest.approx([r.score for r in theirs])
    for mine, other in zip(ours, theirs, strict=True):
        assert mine.tokens == other.tokens
        torch.testing.assert_close(torch.as_tensor(mine.attention),
                                   torch.as_tensor(other.attention))


@pytest.mark.parametrize("which", ["run", "model"])
def test_load_translates_as_the_translation_run_does(dates_run, exported, which):
    path = dates_run if which == "run" else exported(dates_run)
    model = attnlab.load(path)
    assert isinstance(model, TranslationRun) and model.checkpoint == "best"
    assert model.meta["step"] == TranslationRun.load(dates_run).meta["step"]
    same_translations(model.translate(LINES), TranslationRun.load(dates_run).translate(LINES))
    same_translations(model.translate(LINES, beam=1),
                      TranslationRun.load(dates_run).translate(LINES, beam=1))


def test_nbest_lists_the_beam_best_first(dates_run, exported):
    model = attnlab.load(exported(dates_run))
    lists = [result.hypotheses for result in model.translate(LINES, beam=3, n_best=3)]
    assert [len(found) for found in lists] == [3, 1, 3, 3]  # a blank line: its empty result
    same_translations([found[0] for found in lists], model.translate(LINES, beam=3))
    for found in lists:
        assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    assert len(model.translate(LINES[:1], n_best=4)[0].hypotheses) == 4   # beam 2 widens to 4
    with pytest.raises(ValueError, match="n_best must be between 1 and the beam size 2"):
        model.translate(LINES, beam=2, n_best=3)
    with pytest.raises(TypeError, match=r"pass \[line\]"):
        model.translate("14 March 1998")


def test_load_reads_the_chosen_checkpoint(dates_run, pieces_run, exported):
    last = attnlab.load(dates_run, checkpoint="last")
    assert last.checkpoint == "last" and "last" in repr(last)
    same_translations(last.translate(LINES),
                      TranslationRun.load(dates_run, "last").translate(LINES))
    only_last = attnlab.load(exported(pieces_run))   # exported from last/, read as best/
    assert only_last.checkpoint == "best"
    same_translations(only_last.translate(LINES),
                      TranslationRun.load(pieces_run).translate(LINES))


def test_load_captions_files_and_pil_images(caption_run, shapes_data, exported):
    images = sorted((shapes_data / "images").glob("*.png"))[:3]
    model = attnlab.load(exported(caption_run))
    assert isinstance(model, CaptioningRun)
    captions = model.caption(images, beam=2)
    expected = CaptioningRun.load(caption_run).caption(images, beam=2)
    assert [c.words for c in captions] == [c.words for c in expected]
    for ours, theirs in zip(captions, expected, strict=True):
        torch.testing.assert_close(ours.attention, theirs.attention)
    opened = [Image.open(path) for path in images]
    assert [c.text for c in model.caption(opened, beam=2)] == [c.text for c in captions]
    assert model.caption([]) == []


def test_caption_commands_read_the_model_directory(caption_run, shapes_data, exported, tmp_path,
                                                   capsys, monkeypatch):
    """Run inside the folder, where the model's data paths (relative to it) lead to the data."""
    model, image = exported(caption_run), sorted((shapes_data / "images").glob("*.png"))[0]
    printed = {}
    for name, run in (("run", caption_run), ("model", model)):
        monkeypatch.chdir(run)
        assert main(["caption", "predict", "--run", str(run), str(image)]) == 0
        assert main(["evaluate", "--run", str(run), "--output",
                     str(tmp_path / f"{name}.json")]) == 0
        assert main(["plot", "--run", str(run), str(image), "--output",
                     str(tmp_path / f"{name}.png")]) == 0
        printed[name] = capsys.readouterr().out.replace(str(tmp_path / name), "OUT")
    assert printed["model"] == printed["run"]
    scores = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("run", "model")]
    assert scores[0] == scores[1]
    assert (tmp_path / "model.png").read_bytes() == (tmp_path / "run.png").read_bytes()


def test_load_scores_and_reads_sentences_as_the_language_model_run_does(lm_run, text_dir, exported):
    model = attnlab.load(exported(lm_run))
    assert isinstance(model, LanguageModelRun)
    lines = (text_dir / "test.txt").read_text().splitlines()
    ours = model.perplexity(lines)
    theirs = LanguageModelRun.load(lm_run).evaluate(text=text_dir / "test.txt")
    assert ours.perplexity == pytest.approx(theirs.perplexity)
    assert (ours.tokens, ours.sentences, ours.checkpoint) == \
        (theirs.tokens, theirs.sentences, theirs.checkpoint)
    reading = model.read(lines[0])
    loaded = LanguageModelRun.load(lm_run)
    expected = read_with_language_model(loaded.model, loaded.vocab, lines[0])
    assert reading.tokens == expected.tokens
    torch.testing.assert_close(torch.as_tensor(reading.weights), torch.as_tensor(expected.weights))


def test_lm_commands_read_the_model_directory(lm_run, text_dir, exported, tmp_path, capsys):
    model = exported(lm_run)
    printed = {}
    for name, run in (("run", lm_run), ("model", model)):
        assert main(["evaluate", "--run", str(run), "--text",
                     str(text_dir / "test.txt")]) == 0
        assert main(["lm", "plot", "--run", str(run), "the cat sees the dog .", "--output",
                     str(tmp_path / f"{name}.png")]) == 0
        printed[name] = capsys.readouterr().out.replace(str(tmp_path / name), "OUT")
    assert printed["model"] == printed["run"]
    assert (tmp_path / "model.png").read_bytes() == (tmp_path / "run.png").read_bytes()


def refusal(path) -> str:
    with pytest.raises(CheckpointError) as error:
        attnlab.load(path)
    return str(error.value)


def test_what_is_not_a_run_is_named_for_what_it_is(dates_data, dates_run, tmp_path):
    wrote = "pass a folder that attnlab train or attnlab export wrote"
    assert refusal(tmp_path / "nowhere") == f"run directory {tmp_path / 'nowhere'} does not exist"
    assert refusal(dates_data / "train.src") == (f"{dates_data / 'train.src'} is a file, not a "
                                                 f"run directory; {wrote}")
    assert refusal(dates_data) == (f"{dates_data} has no checkpoint (best/ or last/) and holds "
                                   f"no run, so it is not a run directory; {wrote}")
    (tmp_path / "empty").mkdir()
    assert refusal(tmp_path / "empty") == (f"run directory {tmp_path / 'empty'} is empty: it "
                                           f"has no checkpoint (best/ or last/) yet; train a "
                                           f"run into it, or {wrote}")
    assert refusal(dates_run / "best") == (f"{dates_run / 'best'} is the best/ checkpoint of a "
                                           f"run, not a run directory: did you mean {dates_run}?")
    (tmp_path / "started").mkdir()
    (tmp_path / "started" / "config.json").write_text("{}")
    assert refusal(tmp_path / "started") == (f"run directory {tmp_path / 'started'} has no "
                                             f"checkpoint (best/ or last/) yet; train it first")


def test_a_folder_that_holds_runs_names_them(dates_run, pieces_run, tmp_path):
    assert refusal(dates_run.parent) == (f"{dates_run.parent} is not a run directory but holds "
                                         f"one run: did you mean {dates_run}?")
    suite = tmp_path / "suite"
    shutil.copytree(dates_run, suite / "dates" / "seed-1")
    shutil.copytree(pieces_run, suite / "pieces" / "seed-1")
    assert refusal(suite) == (f"{suite} is not a run directory but holds 2 runs: did you mean "
                              f"{suite}/dates/seed-1 or {suite}/pieces/seed-1?")
    assert attnlab.load(suite / "dates" / "seed-1").checkpoint == "best"


def test_a_search_cut_short_says_at_least(tmp_path, monkeypatch):
    for name in ("a", "b/c", "d/e/f"):
        (tmp_path / "runs" / name / "last").mkdir(parents=True)
    monkeypatch.setattr(runs, "SEARCHED", 2)  # runs/ and runs/b: a and b/c found, d/e/f not
    assert refusal(tmp_path / "runs") == (
        f"{tmp_path / 'runs'} is not a run directory but holds at least 2 runs: did you mean "
        f"{tmp_path}/runs/a or {tmp_path}/runs/b/c?")
    (tmp_path / "data" / "x" / "y").mkdir(parents=True)
    assert refusal(tmp_path / "data").startswith(
        f"{tmp_path / 'data'} has no checkpoint (best/ or last/) and no run in its first 2 "
        f"folders, so it is not a run directory")


@pytest.mark.slow
@pytest.mark.parametrize(("run", "verb", "says"), [
    ("dates_run", "caption", "this is a translation model, which has no .caption(): use "
                             ".translate(lines) or .stream(lines) or .explain(sentence)"),
    ("caption_run", "translate", "this is a captioning model, which has no .translate(): use "
                                 ".caption(images)"),
    ("lm_run", "translate", "this is a language model, which has no .translate(): use "
                            ".perplexity(lines) or .read(sentence)"),
    ("caption_run", "perplexity", "this is a captioning model, which has no .perplexity(): use "
                                  ".caption(images)"),
])
def test_another_tasks_verb_names_this_ones(run, verb, says, request):
    model = attnlab.load(request.getfixturevalue(run))
    with pytest.raises(AttributeError) as error:
        getattr(model, verb)(["x"])
    assert str(error.value) == says
    assert not hasattr(model, verb)
    with pytest.raises(AttributeError, match="object has no attribute 'no_such_verb'"):
        assert model.no_such_verb


def test_what_load_refuses(dates_run, exported, tmp_path):
    model = tmp_path / "copy"
    shutil.copytree(exported(dates_run), model)
    weights = model / "best/model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="its content differs from what meta.json records"):
        attnlab.load(model)


def test_importing_attnlab_stays_light():
    code = "import sys, attnlab; print(sorted({'torch', 'attnlab.hub'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def page_python(page: str, heading: str, path: str) -> str:
    """The Python block under `heading` of a page (README.md, docs/...) that loads `path`."""
    text = (Path(__file__).resolve().parents[2] / page).read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    return next(block for block in blocks if f'attnlab.load("{path}")' in block)


@pytest.mark.parametrize(("page", "heading", "path"),
                         [("README.md", "Library example", "runs/demo/run"),
                          ("docs/sharing.md", "Loading it in Python", "models/dates")])
def test_load_examples_of_the_readme_and_docs_run(dates_run, exported, capsys, page, heading,
                                                  path):
    code = page_python(page, heading, path).replace(path, str(exported(dates_run)))
    exec(compile(code, page, "exec"), {})
    assert capsys.readouterr().out.strip()
