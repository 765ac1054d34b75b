"""The statistical aligner beside a translation suite's AER: computed from a member's run in
its seed folder (DIR/<member>/seed-<k>), once, and kept in DIR/aligner.json."""

import json

import pytest

import attnlab.recipes
from attnlab.compare.run.baseline import CACHE, aligner_baseline
from attnlab.compare.run.runner import RunOptions

RWTH = {"name": "RWTH de-en", "kind": "rwth", "title": "the RWTH gold", "short": "RWTH"}
RECORDS = [{"name": "bahdanau", "seed": 2,
            "alignments": [{"name": "RWTH de-en", "aer": 0.8, "gold": RWTH}]}]


class Loaded(Exception):
    """Raised by the stand-in loader, carrying the folder it was asked for."""


def test_the_aligner_reads_the_run_in_the_members_seed_folder(tmp_path, monkeypatch):
    run = tmp_path / "bahdanau" / "seed-2"
    run.mkdir(parents=True)

    def load(path, *args, **kwargs):
        raise Loaded(str(path))

    monkeypatch.setattr(attnlab.recipes, "load", load)
    with pytest.raises(Loaded) as loaded:
        aligner_baseline(tmp_path, RunOptions(), RECORDS)
    assert loaded.value.args[0] == str(run)


def test_a_kept_result_is_read_not_computed_again(tmp_path, monkeypatch):
    kept = {"label": "eflomal", "aer": 0.37, "pairs": 508}
    (tmp_path / CACHE).write_text(json.dumps(kept), encoding="utf-8")
    monkeypatch.setattr(attnlab.recipes, "load", None)   # would fail if called
    assert aligner_baseline(tmp_path, RunOptions(), RECORDS) == kept


def test_a_suite_without_rwth_scores_has_no_aligner_line(tmp_path):
    dates = {"name": "dates", "kind": "dates", "title": "the dates gold", "short": "dates"}
    records = [{"name": "bahdanau", "seed": 1,
                "alignments": [{"name": "dates", "aer": 0.2, "gold": dates}]}]
    assert aligner_baseline(tmp_path, RunOptions(), records) is None


def test_the_aligner_reads_a_member_scored_on_the_gold_not_the_first_member(tmp_path, monkeypatch):
    # The mechanisms suite lists no attention first: its run has no attention, so no gold is
    # found for it, and the report said "the RWTH gold was not found" beside members' AER.
    records = [{"name": "no-attention", "seed": 1, "alignments": []}, *RECORDS]

    def load(path, *args, **kwargs):
        raise Loaded(str(path))

    monkeypatch.setattr(attnlab.recipes, "load", load)
    with pytest.raises(Loaded) as loaded:
        aligner_baseline(tmp_path, RunOptions(), records)
    assert loaded.value.args[0] == str(tmp_path / "bahdanau" / "seed-2")
