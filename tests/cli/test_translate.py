"""`attnlab translate`: line alignment, stdin = file, alignment output, input errors."""

import io
import json
import os
import select
import subprocess
import sys

import pytest

from attnlab.cli import main
from attnlab.translation.alignment import read_links

LINES = ["5. März 2024", "", "2024年3月5日 星期二", "   ", "March 5, 2024"]


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "input.txt"
    path.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    return path


def translate(capsys, *args):
    assert main(["translate", *map(str, args)]) == 0
    return capsys.readouterr().out


def with_stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_empty_lines_stay_in_place(dates_run, tmp_path, capsys):
    (tmp_path / "in.txt").write_text("a\n\nb\n", encoding="utf-8")
    out = translate(capsys, "--run", dates_run, "--input", tmp_path / "in.txt")
    lines = out.split("\n")
    assert len(lines) == 4 and lines[3] == ""  # three lines, each ended by "\n"
    assert lines[1] == "" and lines[0] and lines[2]


def test_stdin_interactive_and_file_agree(dates_run, input_file, monkeypatch, capsys):
    from_file = translate(capsys, "--run", dates_run, "--input", input_file, "--batch-size", 2)
    with_stdin(monkeypatch, input_file.read_bytes())
    from_stdin = translate(capsys, "--run", dates_run)
    with_stdin(monkeypatch, input_file.read_bytes())
    one_at_a_time = translate(capsys, "--run", dates_run, "--interactive")
    assert from_file == from_stdin == one_at_a_time
    assert from_file.split("\n")[1] == from_file.split("\n")[3] == ""


def test_output_file_and_pharaoh_alignments(dates_run, input_file, tmp_path, capsys):
    output, links = tmp_path / "out.txt", tmp_path / "links.txt"
    assert translate(capsys, "--run", dates_run, "--input", input_file, "--output", output,
                     "--alignments", links) == ""
    translations = output.read_text(encoding="utf-8").splitlines()
    gold = read_links(links)  # parses as Pharaoh, 0-based
    assert len(translations) == len(gold) == len(LINES)
    for source, translation, alignment in zip(LINES, translations, gold, strict=True):
        if not source.strip():
            assert translation == "" and not alignment.sure
            continue
        # a character-level run aligns characters: one link per output character
        assert sorted(j for _, j in alignment.sure) == list(range(len(translation)))
        assert all(0 <= i < len(source) for i, _ in alignment.sure)


def test_json_alignments(dates_run, input_file, tmp_path, capsys):
    path = tmp_path / "links.json"
    translate(capsys, "--run", dates_run, "--input", input_file, "--alignments", path,
              "--format", "json", "--beam", 3)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [record["line"] for record in records] == [1, 2, 3, 4, 5]
    assert [record["source"] for record in records] == LINES
    first = records[0]
    assert first["source_pieces"][:-1] == list(LINES[0])
    assert len(first["attention"]) == len(first["target_pieces"])
    assert {len(row) for row in first["attention"]} == {len(first["source_pieces"])}
    assert len(first["word_attention"]) == len(first["target_words"])
    assert isinstance(first["score"], float) and first["alignment"]
    assert records[1]["translation"] == "" and records[1]["target_pieces"] == []


def test_invalid_utf8_names_the_line(dates_run, tmp_path, capsys):
    (tmp_path / "bad.txt").write_bytes(b"5. M\xc3\xa4rz 2024\n3/5/2024 \xff\n")
    assert main(["translate", "--run", str(dates_run), "--input", str(tmp_path / "bad.txt")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "line 2" in error and "invalid UTF-8" in error


@pytest.mark.parametrize("contents", [None, {"config.json": "{}"}])
def test_run_without_checkpoints_is_one_sentence(tmp_path, capsys, contents):
    run_dir = tmp_path / "run"
    if contents is not None:
        run_dir.mkdir()
        for name, text in contents.items():
            (run_dir / name).write_text(text)
    assert main(["translate", "--run", str(run_dir)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("attnlab: error: run directory") and error.count("\n") == 1
    assert "Traceback" not in error


def test_real_stdin_pipe(dates_run, input_file, capsys):
    """A separate process reading a real pipe gives what the file gives, and exits cleanly."""
    expected = translate(capsys, "--run", dates_run, "--input", input_file)
    done = subprocess.run([sys.executable, "-m", "attnlab", "translate", "--run", str(dates_run)],
                          input=input_file.read_bytes(), capture_output=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode("utf-8") == expected


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_terminal_lines_are_answered_one_by_one(dates_run):
    """From a terminal, each line is translated before the next one is typed."""
    terminal, child_side = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "attnlab", "translate", "--run", str(dates_run)],
        stdin=child_side, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    os.close(child_side)
    try:
        answers = []
        for line in ("5. März 2024", "", "3/5/2024"):
            os.write(terminal, (line + "\n").encode())
            ready, _, _ = select.select([process.stdout], [], [], 120)
            assert ready, f"no answer to {line!r} while the terminal stays open"
            answers.append(process.stdout.readline().decode("utf-8"))
        os.write(terminal, b"\x04")  # end of input
        assert process.wait(timeout=60) == 0, process.stderr.read().decode()
    finally:
        process.kill()
        os.close(terminal)
    assert answers[1] == "\n" and answers[0].strip() and answers[2].strip()
