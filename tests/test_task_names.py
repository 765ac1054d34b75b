"""No task is named outside its record: only attnlab.recipes and the task packages compare a
value with a task's name (or switch on a run's task); every other module, the explorer's
JavaScript included, asks the run what it can do."""

import re
from pathlib import Path

from attnlab.recipes import RECIPES

SRC = Path(__file__).resolve().parents[1] / "src" / "attnlab"
ALLOWED = {SRC / "recipes.py", *(SRC / name for name in RECIPES)}
NAMES = "|".join(map(re.escape, RECIPES))
COMPARED = re.compile(
    rf"""(==|!=|===|!==|\bin)\s*\(?\s*["']({NAMES})["']"""   # x == "translation", x in ("lm", ...
    rf"""|["']({NAMES})["']\s*(==|!=|===|!==)"""             # "lm" == x
    rf"""|\bcase\s+["']({NAMES})["']"""                      # match/switch on a name
    r"""|\.task\s*(==|!=|===|!==|\bin\b)""")                 # run.task == ...


def sources() -> list[Path]:
    files = [*SRC.rglob("*.py"), *SRC.rglob("*.js")]
    return [path for path in files
            if not any(path == allowed or allowed in path.parents for allowed in ALLOWED)]


def offences(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if COMPARED.search(line)]


def test_the_scan_sees_a_comparison():
    assert offences('if run.task == "translation":\n    pass') != []
    assert offences('const mine = runs.filter((run) => run.task === "lm");') != []
    assert offences('if kind in ("captioning", "lm"):') != []
    assert offences('    case "translation":') != []
    assert offences('recipe = RECIPES[run.task]') == []


def test_no_task_named_outside_its_record():
    found = {str(path.relative_to(SRC)): offences(path.read_text(encoding="utf-8"))
             for path in sources()}
    assert len(found) > 100  # the scan reads the tree
    assert {path: lines for path, lines in found.items() if lines} == {}
