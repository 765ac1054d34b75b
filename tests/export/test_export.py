"""`attnlab export`: a self-contained model directory that every command reads as it reads the
run, without the training state, refused where it would replace something it should not."""

import json
import re
import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file

from attnlab.cli import main
from attnlab.config import load_config
from attnlab.errors import CheckpointError
from attnlab.hub import export_model, folder_bytes
from attnlab.train import RunDir
from attnlab.translation import RunConfig, TranslationRun

LINES = ["14 March 1998", "", "2001-07-04", "le 3 juin 1987"]


def cli(capsys, *argv):
    """(exit code, stdout, stderr) of `attnlab ARGV`."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_model_directory_is_a_run_with_weights_only(dates_run, exported):
    model = exported(dates_run)
    files = sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file())
    assert files == ["MODEL.md", "best/meta.json", "best/model.safetensors", "config.json",
                     "metrics.jsonl", "src_vocab.json", "tgt_vocab.json"]
    assert (dates_run / "last" / "training_state.pt").is_file()      # the run has one...
    assert not list(model.rglob("training_state.pt"))                  # ...the model none
    assert folder_bytes(model) < folder_bytes(dates_run)
    assert (model / "best/model.safetensors").read_bytes() == \
        (dates_run / "best/model.safetensors").read_bytes()
    for name in ("src_vocab.json", "tgt_vocab.json", "metrics.jsonl"):
        assert (model / name).read_bytes() == (dates_run / name).read_bytes()
    config, trained = (json.loads((path / "config.json").read_text()) for path in (model,
                                                                                    dates_run))
    assert config == {**trained, "data": {**trained["data"], "dir": config["data"]["dir"]}}
    meta, source = (RunDir(path).read_meta("best") for path in (model, dates_run))
    assert list(meta["files"]) == ["model.safetensors"]
    assert meta["files"]["model.safetensors"] == source["files"]["model.safetensors"]
    assert meta["exported"]["checkpoint"] == "best"
    for key in ("step", "metrics", "signature", "parameters", "attnlab_version"):
        assert meta[key] == source[key]


def test_translate_evaluate_plot_and_report_read_it_as_the_run(dates_run, dates_data, exported,
                                                               tmp_path, capsys, monkeypatch):
    """Each command run inside the folder, where the model's data paths (relative to it) lead
    to the run's data."""
    model = exported(dates_run)
    (tmp_path / "in.txt").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    src, ref = dates_data / "test.src", dates_data / "test.tgt"
    outputs = {}
    for name, run in (("run", dates_run), ("model", model)):
        monkeypatch.chdir(run)
        out = tmp_path / name
        out.mkdir()
        assert cli(capsys, "translate", "--run", run, "--input", tmp_path / "in.txt",
                   "--output", out / "hyp.txt", "--alignments", out / "align.txt")[0] == 0
        code, printed, _ = cli(capsys, "evaluate", "--run", run, "--src", src, "--ref", ref,
                               "--output", out / "scores.json")
        assert code == 0
        assert cli(capsys, "plot", "--run", run, LINES[0], "--output", out / "map.png")[0] == 0
        assert cli(capsys, "report", "--run", run, "--src", src, "--ref", ref,
                   "--output", out / "report.html")[0] == 0
        report = (out / "report.html").read_text(encoding="utf-8")

        def paths_named(text, run=run, out=out):
            # the config's data.dir: the run's absolute path shown by its name ("…/dates0"), the
            # model's relative to it ("../../dates0"), as config.json has it
            text = re.sub(r"<td>data\.dir</td><td>[^<]*</td>", "<td>data.dir</td>DATA", text)
            return text.replace(str(out), "OUT").replace(str(run), "RUN")

        outputs[name] = {"hyp": (out / "hyp.txt").read_text(encoding="utf-8"),
                         "align": (out / "align.txt").read_text(encoding="utf-8"),
                         "scores": json.loads((out / "scores.json").read_text()),
                         "printed": paths_named(printed),
                         "png": (out / "map.png").read_bytes(),
                         "report": paths_named(report)}
    assert outputs["run"]["hyp"].count("\n") == len(LINES)
    for key in outputs["run"]:
        assert outputs["model"][key] == outputs["run"][key], key


def test_a_run_with_only_last_exports_last_with_its_sentencepiece_files(pieces_run, exported,
                                                                         capsys):
    assert not (pieces_run / "best").exists()
    model = exported(pieces_run)
    names = {p.name for p in model.iterdir()}
    assert {"src_vocab.model", "tgt_vocab.model", "src_vocab.json", "tgt_vocab.json"} <= names
    assert RunDir(model).read_meta("best")["exported"]["checkpoint"] == "last"
    assert load_file(model / "best/model.safetensors").keys() == \
        load_file(pieces_run / "last/model.safetensors").keys()
    assert cli(capsys, "translate", "--run", model, "--input", "/dev/null")[0] == 0
    texts = [r.text for r in TranslationRun.load(model).translate(LINES)]
    assert texts == [r.text for r in TranslationRun.load(pieces_run).translate(LINES)]


def test_checkpoint_last_is_exported_and_the_model_has_only_it(dates_run, tmp_path, capsys):
    code, out, _ = cli(capsys, "export", "--run", dates_run, "--output", tmp_path / "m",
                       "--checkpoint", "last")
    assert code == 0 and "exported the last checkpoint (step 30)" in out and " MB -> " in out
    model = tmp_path / "m"
    assert RunDir(model).read_meta("best")["step"] == RunDir(dates_run).read_meta("last")["step"]
    ours = [r.text for r in TranslationRun.load(model).translate(LINES, beam=1)]
    last = TranslationRun.load(dates_run, "last")
    assert ours == [r.text for r in last.translate(LINES, beam=1)]
    code, _, err = cli(capsys, "translate", "--run", model, "--checkpoint", "last")
    assert code == 2 and "no 'last' checkpoint, only 'best'" in err


def test_model_card_says_what_the_model_is_and_how_to_train_it_again(dates_run, exported):
    model = exported(dates_run)
    card = (model / "MODEL.md").read_text(encoding="utf-8")
    meta = RunDir(model).read_meta("best")
    trained = TranslationRun.load(model)
    parameters = sum(p.numel() for p in trained.model.parameters())
    for expected in ("translation (src -> tgt)", "bahdanau GRU", "additive, global",
                     f"{parameters:,}", f"step {meta['step']}", "exact_match",
                     f"attnlab train config.json --run runs/{model.name}", "attnlab 0.1.0",
                     f"attnlab translate --run {model.name}", "attnlab.load",
                     f'`"{trained.config.data.dir}"`'):
        assert expected in card, expected
    # The command in the card trains this config: config.json loads as the run's config.
    assert load_config(model / "config.json", RunConfig) == trained.config


@pytest.mark.parametrize("name", ["dates_run", "caption_run", "lm_run"])
def test_the_model_names_no_folder_of_the_machine_that_trained_it(name, request, exported):
    """The runs were trained on absolute paths (pytest's temporary folders): the model
    directory writes them relative to itself."""
    run = request.getfixturevalue(name)
    model = exported(run)
    trained = json.loads((run / "config.json").read_text())["data"]
    data = json.loads((model / "config.json").read_text())["data"]
    rewritten = [key for key, value in trained.items()
                 if isinstance(value, str) and value.startswith("/")]
    assert rewritten  # the fixture trained on absolute paths
    for key in rewritten:
        assert not data[key].startswith("/")
        assert (model / data[key]).resolve() == Path(trained[key]).resolve()
    root = str(run.parent.parent)  # the session's temporary folder: every path above holds it
    for path in model.rglob("*"):
        if path.is_file() and path.suffix in {".json", ".jsonl", ".md"}:
            assert root not in path.read_text(encoding="utf-8"), path.name
    card = (model / "MODEL.md").read_text(encoding="utf-8")
    assert f"`data.{rewritten[0]}`" in card and "relative to this folder" in card


def test_an_existing_folder_is_refused_unless_it_is_an_export_and_overwrite(dates_run, tmp_path,
                                                                            capsys):
    target = tmp_path / "m"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    code, _, err = cli(capsys, "export", "--run", dates_run, "--output", target)
    assert code == 2 and "already exists and is not empty" in err and "--overwrite" in err
    code, _, err = cli(capsys, "export", "--run", dates_run, "--output", target, "--overwrite")
    assert code == 2 and "no MODEL.md" in err
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(capsys, "export", "--run", dates_run, "--output", empty)[0] == 0
    assert (empty / "MODEL.md").is_file()
    code, _, err = cli(capsys, "export", "--run", dates_run, "--output", empty)
    assert code == 2 and "--overwrite" in err
    (empty / "report.html").write_text("stale")
    code, _, _ = cli(capsys, "export", "--run", dates_run, "--output", empty,
                     "--checkpoint", "last", "--overwrite")
    assert code == 0 and not (empty / "report.html").exists()
    assert RunDir(empty).read_meta("best")["exported"]["checkpoint"] == "last"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "m"]  # no temporary left


def test_what_is_not_a_run_is_one_sentence(dates_data, dates_run, tmp_path, capsys):
    for run, says in ((dates_data, "is not a run directory: it has no config.json"),
                      (tmp_path / "nowhere", "is not a run directory: it does not exist"),
                      (dates_data / "train.src", "is not a run directory: it is a file")):
        code, _, err = cli(capsys, "export", "--run", run, "--output", tmp_path / "m")
        assert code == 2 and says in err and err.count("\n") == 1, err
    code, _, err = cli(capsys, "export", "--run", dates_run.parent, "--output", tmp_path / "m")
    assert (code, err) == (2, f"attnlab: error: --run {dates_run.parent} is not a run directory "
                              f"but holds one run: did you mean {dates_run}?\n")
    for inside in (dates_run / "model", dates_run, dates_run.parent):
        code, _, err = cli(capsys, "export", "--run", dates_run, "--output", inside,
                           "--overwrite")
        assert code == 2 and "overlaps the run directory" in err
    assert not (tmp_path / "m").exists() and not (dates_run / "model").exists()


def test_a_run_that_does_not_load_is_refused_before_anything_is_written(dates_run, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(dates_run, broken)
    (broken / "tgt_vocab.json").unlink()
    with pytest.raises(CheckpointError, match="has no vocabularies"):
        export_model(broken, tmp_path / "out" / "m")
    shutil.copytree(dates_run, broken, dirs_exist_ok=True)
    data = bytearray((broken / "best/model.safetensors").read_bytes())
    data[-1] ^= 1
    (broken / "best/model.safetensors").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="is not the file checkpoint"):
        export_model(broken, tmp_path / "out" / "m")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_changed_weights_in_a_model_directory_are_refused(dates_run, exported, tmp_path, capsys):
    model = tmp_path / "copy"
    shutil.copytree(exported(dates_run), model)
    weights = model / "best/model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-4] ^= 0x40
    weights.write_bytes(bytes(data))
    code, _, err = cli(capsys, "translate", "--run", model, "--input", "/dev/null")
    assert code == 2 and f"{weights} is not the file checkpoint" in err
    code, _, err = cli(capsys, "evaluate", "--run", model)
    assert code == 2 and "is not the file checkpoint" in err
