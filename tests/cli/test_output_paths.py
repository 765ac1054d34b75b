"""Output paths of plot, evaluate and report: a bad one is one sentence, given before the run is
loaded; a failed write keeps the old file; an output that is an input is refused."""

import errno
import os
import tempfile

import pytest

from attnlab.cli import main
from attnlab.translation import TranslationRun

from .failures import fail_with

OLD = b"old contents\n"


@pytest.fixture
def no_loading(monkeypatch):
    def load(*args, **kwargs):
        raise AssertionError("the run was loaded before the output paths were checked")

    monkeypatch.setattr(TranslationRun, "load", staticmethod(load))


def commands(run, data, option, path):
    """Each command with `path` as the output `option` names."""
    pairs = ["--src", str(data / "val.de"), "--ref", str(data / "val.en"), "--no-rwth"]
    return {
        "plot": ["plot", "--run", str(run), "Zwei Männer", "--beam", "1", "--output", path],
        "evaluate": ["evaluate", "--run", str(run), *pairs, "--beam", "1", option, path],
        "report": ["report", "--run", str(run), *pairs, "--samples", "1", "--output", path],
    }


CASES = [("plot", "--output", "png"), ("evaluate", "--bucket-plot", "png"),
         ("evaluate", "--output", "json"), ("evaluate", "--hypotheses", "txt"),
         ("report", "--output", "html")]


def one_line_error(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    return error


@pytest.mark.parametrize(("where", "words"), [
    ("missing/out", "its folder {tmp}/missing does not exist; create it first"),
    ("file.txt/out", "{tmp}/file.txt is a file, not a folder"),
    ("folder", "it is a folder, not a file"),
])
@pytest.mark.parametrize(("command", "option", "suffix"), CASES)
def test_bad_output_folders_are_one_sentence_before_any_work(
        command, option, suffix, where, words, deen_run, deen_data, tmp_path, capsys,
        no_loading):
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "folder").mkdir()
    path = tmp_path / (where if where == "folder" else f"{where}.{suffix}")
    error = one_line_error(capsys, commands(deen_run, deen_data, option, path)[command])
    assert error == f"attnlab: error: cannot write {path}: {words.format(tmp=tmp_path)}\n"


@pytest.mark.parametrize(("code", "patched", "words"), [
    (errno.ENOSPC, (os, "fsync"), "no space left on the device"),
    (errno.EROFS, (tempfile, "mkstemp"), "the file system is read-only"),
])
@pytest.mark.parametrize(("command", "option", "suffix"), CASES)
def test_a_failed_write_is_one_sentence_and_keeps_the_old_file(
        command, option, suffix, code, patched, words, deen_run, deen_data, tmp_path,
        monkeypatch, capsys):
    path = tmp_path / f"out.{suffix}"
    path.write_bytes(OLD)
    monkeypatch.setattr(*patched, fail_with(code))
    error = one_line_error(capsys, commands(deen_run, deen_data, option, path)[command])
    assert error.startswith(f"attnlab: error: cannot write {path}: {words}")
    assert path.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize(("command", "option"), [("evaluate", "--hypotheses"),
                                                 ("evaluate", "--output"), ("report", "--output")])
@pytest.mark.parametrize("side", ["val.de", "val.en"])
def test_an_output_that_is_an_input_is_refused(command, option, side, deen_run, deen_data,
                                               tmp_path, capsys, no_loading):
    source = deen_data / side
    before = source.read_bytes()
    link = tmp_path / "link"
    os.link(source, link)
    error = one_line_error(capsys, commands(deen_run, deen_data, option, link)[command])
    flag = "--src" if side == "val.de" else "--ref"
    assert f"{option} {link} is the same file as {flag} {source}: writing it would" in error
    assert source.read_bytes() == before


def test_evaluate_outputs_in_one_file_are_refused(deen_run, deen_data, tmp_path, capsys,
                                                  no_loading):
    path = tmp_path / "out.json"
    argv = commands(deen_run, deen_data, "--output", path)["evaluate"] + ["--hypotheses", path]
    error = one_line_error(capsys, argv)
    assert f"--output {path} is the same file as --hypotheses {path}: give each output" in error


def test_plot_bad_suffix_is_refused_before_any_work(deen_run, tmp_path, capsys, no_loading):
    path = tmp_path / "heatmap.gif"
    error = one_line_error(capsys, ["plot", "--run", deen_run, "Zwei", "--output", path])
    assert error.endswith("use .png, .svg or .pdf\n")


def test_plot_of_a_very_long_sentence_is_drawn_smaller_and_says_so(deen_run, tmp_path,
                                                                   capsys):
    from PIL import Image

    from attnlab.viz.heatmap import MAX_PIXELS

    sentence = " ".join(["Zwei", "Männer", "spielen", "Fußball", "."] * 200)  # 1,000 words
    path = tmp_path / "long.png"
    assert main(["plot", "--run", str(deen_run), sentence, "--beam", "1", "--words",
                 "--output", str(path)]) == 0
    note = capsys.readouterr().out.splitlines()[-1]
    assert note.startswith("note: the heatmap has ")
    assert "x 1,001 cells, too many for 8,000 pixels a side, so it is drawn smaller (" in note
    assert "columns: 8.0 pixels each, no labels); plot a shorter sentence (or --words rather " \
        "than --pieces) to read every label" in note
    with Image.open(path) as image:
        assert image.width <= MAX_PIXELS + 600
