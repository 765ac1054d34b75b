"""The README's library example runs as written, and the demo command works."""

import re
from pathlib import Path

from attnlab.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_library_example_runs(capsys):
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## Library example\n\n```python\n(.*?)```", text, re.S)
    assert code, "README has no library example"
    exec(compile(code.group(1), str(README), "exec"), {})
    assert "additive" in capsys.readouterr().out


def test_attention_tour_demo(capsys):
    assert main(["demo", "--tour"]) == 0
    out = capsys.readouterr().out
    assert "global dot" in out and "local-p" in out and "Katze" in out
