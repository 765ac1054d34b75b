"""`attnlab translate --nbest K` (Moses n-best lines, or one JSON object a line) and the
interactive prompt (line editing, history in ~/.attnlab_history, Ctrl-D ends)."""

import json
import os
import re
import select
import subprocess
import sys
import time

import pytest

from attnlab.cli import main

LINES = ["5. März 2024", "", "3/5/2024", "2024年3月5日"]
MOSES = re.compile(r"^(\d+) \|\|\| (.*) \|\|\| (-?\d+\.\d{4})$")


@pytest.fixture
def input_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    return path


def translate(capsys, *args) -> str:
    assert main(["translate", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_nbest_text_is_moses_nbest(dates_run, input_file, capsys):
    best = translate(capsys, "--run", dates_run, "--input", input_file).splitlines()
    out = translate(capsys, "--run", dates_run, "--input", input_file, "--nbest", 2)
    rows = [MOSES.match(line) for line in out.splitlines()]
    assert all(rows), out
    by_line: dict[int, list[tuple[str, float]]] = {}
    for row in rows:
        by_line.setdefault(int(row[1]), []).append((row[2], float(row[3])))
    assert list(by_line) == list(range(len(LINES)))  # 0-based, in input order
    for number, line in enumerate(LINES):
        hypotheses = by_line[number]
        if not line:
            assert hypotheses == [("", 0.0)]  # a blank line: its one empty answer
            continue
        assert len(hypotheses) == 2 and hypotheses[0][0] == best[number]
        assert hypotheses[0][1] >= hypotheses[1][1]  # best first
        assert hypotheses[0][0] != hypotheses[1][0]


def test_nbest_json_is_one_object_a_line(dates_run, input_file, tmp_path, capsys):
    output = tmp_path / "nbest.jsonl"
    assert translate(capsys, "--run", dates_run, "--input", input_file, "--nbest", 2,
                     "--format", "json", "--output", output) == ""
    best = translate(capsys, "--run", dates_run, "--input", input_file).splitlines()
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert [record["line"] for record in records] == [1, 2, 3, 4]
    assert [record["source"] for record in records] == LINES
    for record, translation in zip(records, best, strict=True):
        hypotheses = record["hypotheses"]
        assert len(hypotheses) == (2 if record["source"] else 1)
        assert hypotheses[0]["translation"] == translation
        assert {"translation", "score", "log_prob"} == set(hypotheses[0])
        scores = [hypothesis["score"] for hypothesis in hypotheses]
        assert scores == sorted(scores, reverse=True)


def test_nbest_over_the_beam_is_one_sentence(dates_run, input_file, capsys):
    assert main(["translate", "--run", str(dates_run), "--input", str(input_file), "--nbest",
                 "3", "--beam", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.err == ("attnlab: error: n_best must be between 1 and the beam size 2, got "
                            "3\n") and captured.out == ""


def test_nbest_without_a_beam_widens_the_runs_beam(dates_run, input_file, capsys):
    out = translate(capsys, "--run", dates_run, "--input", input_file, "--nbest", 3)
    first = [line for line in out.splitlines() if line.startswith("0 |||")]
    assert len(first) == 3   # the run's beam is 2: it widens to the 3 hypotheses asked for


def test_json_format_writes_json_without_nbest_too(dates_run, input_file, capsys):
    best = translate(capsys, "--run", dates_run, "--input", input_file).splitlines()
    out = translate(capsys, "--run", dates_run, "--input", input_file, "--format", "json")
    records = [json.loads(line) for line in out.splitlines()]
    assert [record["translation"] for record in records] == best
    assert [record["source"] for record in records] == LINES
    assert all("hypotheses" not in record for record in records)


def read_until(fd, pattern: bytes, seen: bytearray, timeout=120) -> None:
    """Read the terminal into `seen` until `pattern` has appeared (once more than before)."""
    count = seen.count(pattern) + 1
    deadline = time.monotonic() + timeout
    while seen.count(pattern) < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no {pattern!r} on the terminal; it shows {bytes(seen)!r}"
        seen += os.read(fd, 4096)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_interactive_prompt_with_history(dates_run, tmp_path):
    terminal, child_side = os.openpty()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HOME": str(tmp_path), "TERM": "dumb"}
    process = subprocess.Popen(
        [sys.executable, "-m", "attnlab", "translate", "--run", str(dates_run)],
        stdin=child_side, stdout=child_side, stderr=subprocess.PIPE, env=env)
    os.close(child_side)
    seen = bytearray()
    try:
        read_until(terminal, b"> ", seen)
        os.write(terminal, b"3/5/2024\r")
        read_until(terminal, b"> ", seen)
        os.write(terminal, b"\x04")  # Ctrl-D at the prompt: the end
        assert process.wait(timeout=60) == 0, process.stderr.read().decode()
    finally:
        process.kill()
        os.close(terminal)
    shown = bytes(seen).decode("utf-8", "replace").replace("\r", "")
    answer = shown.split("3/5/2024\n", 1)[1].split("> ", 1)[0]
    assert re.fullmatch(r"[0-9-]*\n", answer), shown  # a translation, then the next prompt
    assert "Traceback" not in shown
    history = (tmp_path / ".attnlab_history").read_text(encoding="utf-8", errors="replace")
    assert "3/5/2024" in history
