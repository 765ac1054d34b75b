"""A run directory of a format older than the current one is refused in one sentence naming the
checkpoint, the attnlab version that wrote it and what to do, by every command that reads a
run: before the first release a format change is not upgraded."""

import json
import shutil

import pytest

import attnlab
from attnlab.cli import main
from attnlab.errors import CheckpointError
from attnlab.hub import export_model
from attnlab.serve.runs import load_served
from attnlab.train import RunDir
from attnlab.train.formats import FORMAT_VERSION


def older(run, folder, version, made_by="0.0.9"):
    """A copy of `run` whose meta.json files say format `version` (None: no format at all)."""
    old = folder / f"{run.name}-format-{version}"
    shutil.copytree(run, old)
    for meta_file in old.glob("*/meta.json"):
        meta = json.loads(meta_file.read_text())
        meta["attnlab_version"] = made_by
        if version is None:
            del meta["format_version"]
        else:
            meta["format_version"] = version
        meta_file.write_text(json.dumps(meta, indent=2))
    return old


def test_a_format_2_run_is_refused_by_every_reader(dates_run, tmp_path, capsys):
    old = older(dates_run, tmp_path, 2)
    sentence = (f"is in run format 2, written by attnlab 0.0.9; this attnlab reads format "
                f"{FORMAT_VERSION} only: train it again with attnlab")
    with pytest.raises(CheckpointError, match=sentence):
        attnlab.load(old)
    with pytest.raises(CheckpointError, match=sentence):
        load_served("old", old)
    with pytest.raises(CheckpointError, match=sentence):
        export_model(old, tmp_path / "exported")
    for argv in (["translate", "--run", old, "--input", "/dev/null"],
                 ["evaluate", "--run", old, "--output", tmp_path / "scores.json"],
                 ["plot", "--run", old, "14 March 1998", "--output", tmp_path / "a.png"]):
        assert main([str(part) for part in argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and sentence in err and str(old) in err
    assert not (tmp_path / "a.png").exists() and not (tmp_path / "scores.json").exists()


def test_a_run_without_a_format_is_refused_in_one_sentence(dates_run, tmp_path):
    old = older(dates_run, tmp_path, None, made_by=None)
    with pytest.raises(CheckpointError, match=r"best is in run format 1, written by attnlab an "
                                              r"early version; this attnlab reads format 3 "
                                              r"only: train it again"):
        RunDir(old).read_meta("best")


def test_the_current_format_is_what_a_run_writes(dates_run):
    meta = json.loads((dates_run / "best/meta.json").read_text())
    assert meta["format_version"] == FORMAT_VERSION == 3
