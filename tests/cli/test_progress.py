"""Progress bars: on standard error when it is a terminal, never in a pipe or CI, and never
with --quiet; `translate` shows one only while it writes a file."""

import re
import sys

import pytest

from attnlab.cli import main
from attnlab.train.progress import progress_bar, wanted


def commands(runs, tmp_path):
    """(argv, the bar's label) of each command with a long job."""
    deen_data, dates_data = runs["deen_data"], runs["dates_data"]
    source = tmp_path / "in.txt"
    source.write_text("5. März 2024\n\n3/5/2024\n", encoding="utf-8")
    return {
        "translate": (["translate", "--run", runs["dates_run"], "--input", source, "--output",
                       tmp_path / "out.txt", "--beam", "1"], "translating"),
        "evaluate": (["evaluate", "--run", runs["dates_run"], "--src", dates_data / "test.src",
                      "--ref", dates_data / "test.tgt", "--beam", "1"], "aligning"),
        "report": (["report", "--run", runs["deen_run"], "--src", deen_data / "val.de", "--ref",
                    deen_data / "val.en", "--output", tmp_path / "r.html", "--samples", "1",
                    "--beam", "1", "--no-rwth"], "translating"),
        "evaluate lm": (["evaluate", "--run", runs["lm_run"]], "perplexity"),
        "evaluate captioning": (["evaluate", "--run", runs["caption_run"], "--beam", "1"],
                                "captioning"),
    }


@pytest.fixture
def runs(request):
    names = ("dates_run", "dates_data", "deen_run", "deen_data", "lm_run", "caption_run")
    return {name: request.getfixturevalue(name) for name in names}


def run(capsys, argv) -> str:
    assert main([str(part) for part in argv]) == 0
    return capsys.readouterr().err


def terminal(monkeypatch):
    """Make the captured standard error say it is a terminal."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["translate", "evaluate", "report", "evaluate lm",
                                     "evaluate captioning"])
def test_a_bar_on_a_terminal_only_and_never_with_quiet(command, runs, tmp_path, monkeypatch,
                                                       capsys):
    argv, label = commands(runs, tmp_path)[command]
    assert run(capsys, argv) == ""          # not a terminal (a pipe, CI): no bar
    terminal(monkeypatch)
    shown = run(capsys, argv)
    assert f"{label}:" in shown and "%|" in shown
    assert run(capsys, [*argv, "--quiet"]) == ""


def test_translate_to_a_terminal_or_pipe_has_no_bar(dates_run, tmp_path, monkeypatch, capsys):
    source = tmp_path / "in.txt"
    source.write_text("5. März 2024\n3/5/2024\n", encoding="utf-8")
    terminal(monkeypatch)
    assert main(["translate", "--run", str(dates_run), "--input", str(source)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and len(captured.out.splitlines()) == 2


def test_the_bar_counts_to_the_lines_of_the_input(dates_run, tmp_path, monkeypatch, capsys):
    source = tmp_path / "in.txt"
    source.write_bytes("5. März 2024\n\n3/5/2024\n4.3.2024".encode())  # last line unended
    terminal(monkeypatch)
    assert main(["translate", "--run", str(dates_run), "--input", str(source), "--output",
                 str(tmp_path / "out.txt")]) == 0
    err = capsys.readouterr().err
    assert re.search(r"translating:\s+0%\|\s*\| 0/4 ", err)  # a bar that counts to 4 lines
    assert len((tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()) == 4


def test_progress_bar_helper(monkeypatch, capsys):
    with progress_bar(3, "counting", enabled=True) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""  # captured standard error is no terminal
    assert not wanted(True)
    terminal(monkeypatch)
    assert wanted(True) and not wanted(False)
    with progress_bar(3, "counting", enabled=True) as bar:
        bar.update(3)
    assert "counting:" in capsys.readouterr().err
    with progress_bar(3, "counting", enabled=False) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""
