"""Exact match is shown, and tested, only where it is the runs' own metric (the dates task's,
by which their config chose the best checkpoint): of long sentences it is 0 for every member
and says nothing (the bottleneck report showed a column of 0.0 and three tests of 0 against 0)."""

import json

from attnlab.compare.report.page import with_exact_match
from attnlab.compare.report.tables import results_rows
from attnlab.compare.stats.verdicts import statistics


def run_dir(tmp_path, metric):
    folder = tmp_path / metric
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(
        {"train": {"early_stopping": {"metric": metric, "mode": "max"}}}))
    return folder


def record(name, run):
    return {"name": name, "label": name, "task": "translation", "runs": [run],
            "scores": dict(run["scores"]), "seeds": 1}


def test_exact_match_only_where_the_run_is_judged_by_it(tmp_path):
    texts = {"hypotheses": ["2003-03-05", "1999-12-01"], "references": ["2003-03-05", "x"]}
    dates = with_exact_match({**texts, "scores": {"bleu": 50.0}}, run_dir(tmp_path, "exact_match"))
    long = with_exact_match({**texts, "scores": {"bleu": 50.0}}, run_dir(tmp_path, "bleu"))
    assert dates["scores"]["exact_match"] == 50.0
    assert "exact_match" not in long["scores"]
    header = results_rows("translation", [record("a", long), record("b", long)])[0]
    assert "exact match %" not in header and "BLEU" in header
    assert "exact match %" in results_rows("translation", [record("a", dates)])[0]
    assert statistics(record("a", long), record("b", long), "exact_match") is None
    assert statistics(record("a", dates), record("b", dates), "exact_match") is not None
