"""`attnlab compare` end to end on a tiny dates suite: every member trained and scored, the
report and results.md with every section; a suite killed mid-member resumes that member (its
losses continue from the checkpoint) and does not retrain the finished ones."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest
import yaml

from attnlab.cli import main
from attnlab.configs import config_path

DATES_CONFIG = str(config_path("dates-bahdanau"))
TINY = {"model.encoder.embedding_dim": 8, "model.encoder.hidden_dim": 8,
        "model.decoder.embedding_dim": 8, "model.decoder.hidden_dim": 16,
        "model.decoder.attention.hidden_dim": 8,
        "data.batch_size": 16, "data.valid_sentences": 20,
        "train.max_epochs": None, "train.max_minutes": None, "train.validate_every": 10,
        "train.checkpoint_every": 5, "train.log_every": 5, "train.tensorboard": False,
        "train.early_stopping.patience": None, "train.threads": 1, "train.device": "cpu"}


def suite_file(tmp_path, data_dir, steps=(20, 20), name="tiny"):
    suite = {"name": name, "task": "translation", "title": "tiny dates suite",
             "claim": "attention helps", "data": str(data_dir), "example": "12 March 2019",
             "set": TINY, "evaluate": {"beam": 2, "limit": 30, "length_edges": [0, 3]},
             "members": [
                 {"name": "plain", "label": "no attention", "config": DATES_CONFIG,
                  "set": {"model.decoder.kind": "none", "train.max_steps": steps[0]}},
                 {"name": "bahdanau", "label": "Bahdanau", "config": DATES_CONFIG,
                  "set": {"train.max_steps": steps[1]}}]}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, allow_unicode=True))
    return path


@pytest.mark.slow
def test_a_suite_trains_scores_and_reports_every_member(tmp_path, dates_dir, capsys):
    out = tmp_path / "out"
    assert main(["compare", str(suite_file(tmp_path, dates_dir)), "--dir", str(out),
                 "--quiet"]) == 0
    records = [json.loads((out / name / "seed-1" / "compare.json").read_text())
               for name in ("plain", "bahdanau")]
    assert [r["updates"] for r in records] == [20, 20]
    for record in records:
        assert 0 <= record["scores"]["bleu"] <= 100 and record["ms_per_update"] > 0
        assert [updates for updates, _ in record["curve"]] == [10, 20]   # validate_every 10
        assert record["stopped_by"] == "max_steps" and record["seed"] == 1
        assert 0 < record["compute_minutes"] <= record["minutes"] + 1e-3
        assert sum(bucket["count"] for bucket in record["buckets"]) == 30
        assert [bucket["label"] for bucket in record["buckets"]] == ["0-2", "3+"]
    plain, bahdanau = records
    assert plain["attention_row"] is None and plain["alignments"] == []
    assert "s_{t-1}" in bahdanau["attention_row"]
    assert [a["gold"]["kind"] for a in bahdanau["alignments"]] == ["dates"]
    weights = bahdanau["example"]["weights"]
    assert len(weights) == len(bahdanau["example"]["target_tokens"])
    assert all(len(row) == len(bahdanau["example"]["source_tokens"]) for row in weights)

    page = (out / "report.html").read_text()
    assert "Vocabulary.</b> the same in every member" in (out / "report.html").read_text()
    for section in ("Findings", "Results", "Figures", "BLEU of each member",
                    "against the updates", "Alignment error rate", "same sentence",
                    "Which attention row", "Members", "Budget and seeds", "max_steps (1 of 1",
                    "Is the difference real?", "Welch",
                    "compute minutes"):
        assert section in page, section
    assert page.count("data:image/png;base64,") == 4   # length, curves, AER, heatmap grid
    assert "columns: the source characters" in page     # a character model's figures say so
    assert "http://" not in page and "https://" not in page and "<script" not in page
    markdown = (out / "results.md").read_text()
    assert "| no attention |" in markdown and "| Bahdanau |" in markdown
    assert "Attention adds" in markdown


@pytest.mark.slow
def test_report_gathers_what_is_finished_and_only_runs_one(tmp_path, dates_dir, capsys):
    out, suite = tmp_path / "out", str(suite_file(tmp_path, dates_dir, steps=(10, 10)))
    assert main(["compare", suite, "--dir", str(out), "--only", "bahdanau",
                 "--quiet"]) == 0
    assert not (out / "plain").exists()
    assert (out / "bahdanau" / "seed-1" / "compare.json").is_file()
    unfinished = "Not finished yet:</b> no attention (plain), left out by --only"
    assert unfinished in (out / "report.html").read_text()
    assert main(["compare", suite, "--dir", str(out), "--report"]) == 0
    page = (out / "report.html").read_text()
    assert unfinished in page and "Bahdanau" in page
    assert f"--dir {out} --only bahdanau</code>" in page    # as the runs were asked for


@pytest.mark.slow
def test_claims_are_fixed_before_the_runs_and_a_change_shows_the_first_encoding(
        tmp_path, dates_dir, capsys):
    out, path = tmp_path / "out", suite_file(tmp_path, dates_dir, steps=(10, 10))
    suite = yaml.safe_load(path.read_text())
    first = [{"better": "bahdanau", "than": "diagonal", "metric": "aer"}]
    path.write_text(yaml.safe_dump({**suite, "expect": first}))
    assert main(["compare", str(path), "--dir", str(out), "--only", "bahdanau",
                 "--quiet"]) == 0
    registered = json.loads((out / "claims.json").read_text())
    assert registered["expect"] == [{"relation": "better", "a": "bahdanau", "b": "diagonal",
                                     "metric": "aer", "margin": None}]
    assert main(["compare", str(path), "--dir", str(out), "--report"]) == 0
    assert "registered when the first run started" in (out / "results.md").read_text()
    assert "have not changed since" in (out / "results.md").read_text()

    # the claim re-encoded after the results: the report shows the change and the first
    # encoding's outcome; the registration itself is never rewritten
    path.write_text(yaml.safe_dump({**suite, "expect": [
        {"no_worse": "bahdanau", "than": "diagonal", "metric": "aer", "margin": 0.5}]}))
    assert main(["compare", str(path), "--dir", str(out), "--only", "bahdanau",
                 "--quiet"]) == 0
    assert json.loads((out / "claims.json").read_text()) == registered
    assert main(["compare", str(path), "--dir", str(out), "--report"]) == 0
    markdown = (out / "results.md").read_text()
    assert "The claims changed after they were registered" in markdown
    assert "- first encoding: Bahdanau better than the diagonal aligner on aer: " in markdown
    assert "Bahdanau no worse than the diagonal aligner on aer (by more than 0.5)" in markdown

    (out / "claims.json").unlink()   # runs made before claims were registered
    assert main(["compare", str(path), "--dir", str(out), "--report"]) == 0
    assert "claims were not registered before the runs" in (out / "results.md").read_text()


def test_report_without_finished_members_says_so(tmp_path, dates_dir, capsys):
    code = main(["compare", str(suite_file(tmp_path, dates_dir)), "--dir",
                 str(tmp_path / "none"), "--report"])
    assert code == 2
    assert "no finished member" in capsys.readouterr().err


def attnlab(*args):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "attnlab", *args, "--quiet"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def checkpoint_step(run_dir):
    try:
        return json.loads((run_dir / "last" / "meta.json").read_text())["step"]
    except (OSError, ValueError, KeyError):
        return 0


def train_steps(run_dir):
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["step"] for r in records if r["kind"] == "train"]


@pytest.mark.slow
def test_a_killed_suite_resumes_the_member_it_was_training(tmp_path, dates_dir):
    out, steps = tmp_path / "out", 200
    suite = str(suite_file(tmp_path, dates_dir, steps=(10, steps)))
    process = attnlab("compare", suite, "--dir", str(out))
    second = out / "bahdanau" / "seed-1"
    deadline = time.time() + 240
    while checkpoint_step(second) < 10 and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    if process.poll() is not None:
        pytest.fail(f"the suite ended before it could be killed: {process.stdout.read()!r}")
    process.send_signal(signal.SIGKILL)
    process.wait()
    first_record = (out / "plain" / "seed-1" / "compare.json").stat().st_mtime_ns
    resumed_from = checkpoint_step(second)
    assert 10 <= resumed_from < steps and not (second / "compare.json").exists()

    rerun = attnlab("compare", suite, "--dir", str(out))
    output = rerun.communicate(timeout=300)[0].decode()
    assert rerun.returncode == 0, output
    assert "plain seed 1: finished, kept" in output
    assert f"at step {resumed_from}" in output
    assert (out / "plain" / "seed-1" / "compare.json").stat().st_mtime_ns == first_record
    logged = train_steps(second)
    after = logged[logged.index(resumed_from) + 1:] if resumed_from in logged else logged
    assert after[0] == resumed_from + 5 and after[-1] == steps   # continues, not restarted
    assert json.loads((second / "compare.json").read_text())["updates"] == steps


@pytest.mark.slow
def test_a_member_with_another_config_is_refused_not_replaced(tmp_path, dates_dir, capsys):
    out = tmp_path / "out"
    suite = suite_file(tmp_path, dates_dir, steps=(10, 10))
    assert main(["compare", str(suite), "--dir", str(out), "--only", "plain",
                 "--quiet"]) == 0
    run = out / "plain" / "seed-1"
    (run / "compare.json").unlink()        # as if it had been interrupted
    text = suite.read_text().replace("hidden_dim: 16", "hidden_dim: 24")
    suite.write_text(text)
    before = sorted(p.name for p in run.iterdir())
    assert main(["compare", str(suite), "--dir", str(out), "--only", "plain"]) == 2
    error = capsys.readouterr().err
    assert "holds a run with another config" in error and "model.decoder.hidden_dim" in error
    assert sorted(p.name for p in run.iterdir()) == before


@pytest.mark.slow
def test_two_members_of_one_config_are_not_told_apart(tmp_path, dates_dir):
    """The same config twice, differing only in their training seeds (1-3 against 101-103):
    no pair is declared different on any metric, and "B matches A within 5 BLEU" is reproduced
    or inconclusive, never not reproduced."""
    suite = {"name": "twins", "task": "translation", "title": "one config twice",
             "claim": "two seeds of one config are one method", "data": str(dates_dir),
             "set": {**TINY, "train.max_steps": 20}, "seeds": 3,
             "evaluate": {"beam": 1, "limit": 30},
             "members": [{"name": "a", "label": "A", "config": DATES_CONFIG},
                         {"name": "b", "label": "B", "config": DATES_CONFIG,
                          "set": {"train.seed": 101}}],
             "expect": [{"matches": "b", "as": "a", "metric": "bleu", "margin": 5.0}]}
    path = tmp_path / "twins.yaml"
    path.write_text(yaml.safe_dump(suite))
    out = tmp_path / "out"
    assert main(["compare", str(path), "--dir", str(out), "--quiet"]) == 0
    seeds = {name: [json.loads((out / name / f"seed-{k}" / "compare.json").read_text())
                    ["train_seed"] for k in (1, 2, 3)] for name in ("a", "b")}
    assert seeds == {"a": [1, 2, 3], "b": [101, 102, 103]}
    markdown = (out / "results.md").read_text()
    verdict = next(line for line in markdown.splitlines() if line.startswith("**Verdict: "))
    assert verdict in ("**Verdict: reproduced.**", "**Verdict: inconclusive.**"), markdown
    pairs = [line for line in markdown.splitlines()
             if line.startswith("- ") and "(Holm-adjusted)" in line]
    assert pairs and all(line.startswith("- no significant difference") for line in pairs), pairs


@pytest.mark.slow
def test_several_only_run_each_and_the_report_names_its_options(tmp_path, dates_dir, capsys):
    out = tmp_path / "out"
    suite = str(suite_file(tmp_path, dates_dir, steps=(10, 10)))
    assert main(["compare", suite, "--dir", str(out), "--only", "plain", "--only", "plain"]) == 2
    assert "--only names a member twice" in capsys.readouterr().err
    assert main(["compare", suite, "--dir", str(out), "--only", "plain", "--seeds", "2",
                 "--scale", "0.5", "--data", str(dates_dir), "--quiet"]) == 0
    assert all((out / "plain" / f"seed-{k}" / "compare.json").is_file() for k in (1, 2))
    assert not (out / "bahdanau").exists()
    # a bare --report describes the runs as they were asked for
    assert main(["compare", suite, "--dir", str(out), "--report"]) == 0
    markdown = (out / "results.md").read_text()
    made_by = markdown.splitlines()[2]
    assert made_by == (f"`attnlab compare {suite} --dir {out} --only plain --seeds 2 "
                       f"--data {dates_dir} --scale 0.5`")
    assert "Every member trains for 5 updates, with 2 seed(s)" in markdown
    assert "of 5 seeds" not in markdown and "Bahdanau (bahdanau), left out by --only" in markdown
    # the command it gives, pasted, trains nothing more and writes the same report
    records = {k: (out / "plain" / f"seed-{k}" / "compare.json").read_bytes() for k in (1, 2)}
    assert main(shlex.split(made_by.strip("`"))[1:]) == 0
    assert {k: (out / "plain" / f"seed-{k}" / "compare.json").read_bytes()
            for k in (1, 2)} == records
    assert (out / "results.md").read_text().splitlines()[2] == made_by
