"""docs/tutorial.ipynb runs top to bottom (with a few updates per model instead of its
stated budget) and every figure it shows is a self-contained view; the copy in docs/ is
stored executed (the docs site renders its outputs) and self-contained too."""

import re
from pathlib import Path

import pytest

from .test_views import external_sources

nbformat = pytest.importorskip("nbformat", reason="the tutorial test needs nbformat")
pytest.importorskip("nbclient", reason="the tutorial test needs nbclient: pip install nbclient")

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial.ipynb"
VIEW = 'modules["heatmap.js"]'


def html_outputs(nb) -> list[str]:
    return [
        output["data"]["text/html"]
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "text/html" in output.get("data", {})
    ]


def kinds(html: str) -> set[str]:
    data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)[1]
    return set(re.findall(r'"kind": "(\w+)"', data))


def check_views(nb) -> None:
    shown = html_outputs(nb)
    assert all(VIEW in html for html in shown)
    assert all(external_sources(html) == [] for html in shown)
    found = set().union(*(kinds(html) for html in shown))
    assert {"translation", "compare", "caption", "reading"} <= found


@pytest.mark.slow
def test_the_tutorial_runs_top_to_bottom(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("ATTNLAB_TUTORIAL_UPDATES", "4")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(TUTORIAL, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [
        output
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, errors
    check_views(nb)
    assert list(tmp_path.iterdir()) == []  # its data and runs go to a temporary folder


def test_the_stored_tutorial_is_executed_and_self_contained():
    nb = nbformat.read(TUTORIAL, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code)
    check_views(nb)
    text = TUTORIAL.read_text(encoding="utf-8")
    for paper in (
        "Bahdanau et al. 2015",
        "Luong et al. 2015",
        "Xu et al. 2015",
        "Cheng et al. 2016",
        "Attention? Attention!",
    ):
        assert paper in text
