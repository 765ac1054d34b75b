"""`attnlab translate` never destroys its input, and a failed or interrupted run leaves the old
output whole: each refusal is one sentence, given before the run is loaded."""

import errno
import os
import sys
import tempfile
import threading

import pytest

from attnlab.cli import main
from attnlab.translation import TranslationRun

from .failures import fail_with

INPUT = "5. März 2024\n\n3/5/2024\n"


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text(INPUT, encoding="utf-8")
    return path


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if the run is loaded: refusals come before any work."""
    def load(*args, **kwargs):
        raise AssertionError("the run was loaded before the paths were checked")

    monkeypatch.setattr(TranslationRun, "load", staticmethod(load))


def refused(capsys, *args) -> str:
    assert main(["translate", *map(str, args)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
    return captured.err


def files_in(folder):
    return sorted(path.name for path in folder.iterdir())


@pytest.mark.parametrize("how", ["same name", "hard link", "symbolic link"])
@pytest.mark.parametrize("option", ["--output", "--alignments"])
def test_an_output_that_is_the_input_is_refused(how, option, dates_run, input_file, tmp_path,
                                                capsys, no_loading):
    output = input_file
    if how != "same name":
        output = tmp_path / "out.txt"
        (os.link if how == "hard link" else os.symlink)(input_file, output)
    error = refused(capsys, "--run", dates_run, "--input", input_file, option, output)
    assert error == (f"attnlab: error: {option} {output} is the same file as --input "
                     f"{input_file}: writing it would destroy the input, so write to another "
                     f"file\n")
    assert input_file.read_bytes() == INPUT.encode()


@pytest.mark.parametrize("existing", [False, True])
def test_alignments_and_output_in_one_file_are_refused(existing, dates_run, input_file,
                                                       tmp_path, capsys, no_loading):
    output, links = tmp_path / "out.txt", tmp_path / "links.txt"
    if existing:
        output.write_text("old\n")
        os.link(output, links)
    else:
        links = tmp_path / "." / "out.txt"  # another spelling of a file not written yet
    error = refused(capsys, "--run", dates_run, "--input", input_file, "--output", output,
                    "--alignments", links)
    assert f"--alignments {links} is the same file as --output {output}: give each" in error
    assert not existing or output.read_text() == "old\n"


def test_output_that_standard_input_reads_is_refused(dates_run, input_file, monkeypatch,
                                                     capsys, no_loading):
    with open(input_file, encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        error = refused(capsys, "--run", dates_run, "--output", input_file)
    assert f"--output {input_file} is the same file as standard input: writing" in error
    assert input_file.read_bytes() == INPUT.encode()


@pytest.mark.parametrize(("make", "words"), [
    (lambda tmp: tmp / "missing" / "out.txt", "does not exist; create it first"),
    (lambda tmp: tmp / "in.txt" / "out.txt", "in.txt is a file, not a folder"),
    (lambda tmp: tmp, "it is a folder, not a file"),
])
@pytest.mark.parametrize("option", ["--output", "--alignments"])
def test_unwritable_output_paths_are_named_before_any_work(make, words, option, dates_run,
                                                           input_file, tmp_path, capsys,
                                                           no_loading):
    path = make(tmp_path)
    error = refused(capsys, "--run", dates_run, "--input", input_file, option, path)
    assert error.startswith(f"attnlab: error: cannot write {path}") and words in error


@pytest.mark.parametrize(("code", "patched", "words"), [
    (errno.ENOSPC, (os, "fsync"), "no space left on the device; free some space or"),
    (errno.EROFS, (tempfile, "mkstemp"), "the file system is read-only;"),
])
def test_a_failed_write_is_one_sentence_and_keeps_the_old_output(
        code, patched, words, dates_run, input_file, tmp_path, monkeypatch, capsys):
    output = tmp_path / "out.txt"
    output.write_bytes(b"old output\n")
    monkeypatch.setattr(*patched, fail_with(code))
    error = refused(capsys, "--run", dates_run, "--input", input_file, "--output", output)
    assert error.startswith(f"attnlab: error: cannot write {output}: {words}")
    assert output.read_bytes() == b"old output\n"
    assert files_in(tmp_path) == ["in.txt", "out.txt"]  # no temporary left behind


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, RuntimeError])
def test_an_interrupted_run_keeps_the_old_outputs(interruption, dates_run, input_file,
                                                  tmp_path, monkeypatch, capsys):
    output, links = tmp_path / "out.txt", tmp_path / "links.txt"
    output.write_bytes(b"old output\n")
    links.write_bytes(b"old links\n")
    stream = TranslationRun.stream

    def translate_then_stop(self, lines, decode=None, **options):
        yield next(iter(stream(self, lines, decode, **options)))
        assert output.read_bytes() == b"old output\n"  # nothing visible while it runs
        raise interruption("stopped")

    monkeypatch.setattr(TranslationRun, "stream", translate_then_stop)
    code = main(["translate", "--run", str(dates_run), "--input", str(input_file), "--output",
                 str(output), "--alignments", str(links)])
    assert code == (130 if interruption is KeyboardInterrupt else 1)
    assert output.read_bytes() == b"old output\n" and links.read_bytes() == b"old links\n"
    assert files_in(tmp_path) == ["in.txt", "links.txt", "out.txt"]
    assert capsys.readouterr().err.count("\n") == 1


def test_a_finished_run_replaces_the_output_through_a_link(dates_run, input_file, tmp_path,
                                                           capsys):
    target, link = tmp_path / "out.txt", tmp_path / "link.txt"
    target.write_text("old\n" * 10)
    link.symlink_to(target)
    assert main(["translate", "--run", str(dates_run), "--input", str(input_file), "--output",
                 str(link)]) == 0
    assert link.is_symlink() and len(target.read_text().split("\n")) == 4  # 3 lines
    assert target.read_text().split("\n")[1] == ""
    assert input_file.read_bytes() == INPUT.encode()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_is_written_in_place_not_replaced(dates_run, input_file, tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    assert main(["translate", "--run", str(dates_run), "--input", str(input_file), "--output",
                 str(pipe)]) == 0
    reader.join(timeout=60)
    assert received and received[0].count(b"\n") == 3
    assert not pipe.is_file() and pipe.exists()  # still the pipe


def test_outputs_keep_their_mode_or_get_the_usual_one(dates_run, input_file, tmp_path, capsys):
    shared, new = tmp_path / "shared.txt", tmp_path / "new.txt"
    shared.write_text("old\n")
    shared.chmod(0o664)
    umask = os.umask(0o022)
    try:
        assert main(["translate", "--run", str(dates_run), "--input", str(input_file),
                     "--output", str(shared), "--alignments", str(new)]) == 0
    finally:
        os.umask(umask)
    assert shared.stat().st_mode & 0o777 == 0o664 and new.stat().st_mode & 0o777 == 0o644
