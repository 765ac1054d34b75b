"""Seeds, --jobs and the verdict: a tiny dates suite with two seeds trained two runs at a time,
killed and resumed, and reported with spreads, the pairwise tests and the claim's verdict; the
statistics that decide it on hand-made members."""

import json
import signal
import time

import numpy as np
import pytest
import yaml

from attnlab.cli import main
from attnlab.compare.stats.across_seeds import mean_scorer
from attnlab.compare.stats.claims import Expectation
from attnlab.compare.stats.seeds import aggregate, stop_summary
from attnlab.compare.stats.verdicts import claim_verdict, pairwise
from attnlab.compare.suite.definition import Budget, Suite, load_suite
from attnlab.errors import ConfigError

from .test_compare import attnlab, checkpoint_step, suite_file


def seeded_suite(tmp_path, data_dir, steps=(10, 300)):
    path = suite_file(tmp_path, data_dir, steps=steps)
    suite = yaml.safe_load(path.read_text())
    suite.update(seeds=2, expect=[{"better": "bahdanau", "than": "plain", "metric": "bleu"},
                                  {"better": "bahdanau", "than": "diagonal", "metric": "aer"}])
    path.write_text(yaml.safe_dump(suite))
    return path


@pytest.mark.slow
def test_jobs_train_two_seeds_at_once_and_a_killed_run_resumes_every_member(tmp_path,
                                                                            dates_dir):
    out = tmp_path / "out"
    suite = str(seeded_suite(tmp_path, dates_dir))
    # The short member first, so that both seeds of the long one then train side by side
    # (seed by seed, plain's second seed would otherwise hold back bahdanau's second).
    first = attnlab("compare", suite, "--dir", str(out), "--only", "plain", "--jobs", "2")
    assert first.wait(timeout=300) == 0, first.stdout.read()
    process = attnlab("compare", suite, "--dir", str(out), "--jobs", "2")
    runs = [out / "bahdanau" / "seed-1", out / "bahdanau" / "seed-2"]
    deadline = time.time() + 240
    while (min(checkpoint_step(run) for run in runs) < 10 and process.poll() is None
           and time.time() < deadline):
        time.sleep(0.05)
    if process.poll() is not None:
        pytest.fail(f"the suite ended before it could be killed: {process.stdout.read()!r}")
    process.send_signal(signal.SIGKILL)   # the children follow (SIGTERM, saving `last`)
    process.wait()
    time.sleep(3)
    stopped = {run.name: checkpoint_step(run) for run in runs}
    assert all(10 <= step < 300 for step in stopped.values()), stopped
    assert not any((run / "compare.json").exists() for run in runs)

    rerun = attnlab("compare", suite, "--dir", str(out), "--jobs", "2")
    output = rerun.communicate(timeout=400)[0].decode()
    assert rerun.returncode == 0, output
    assert "plain seed 1: finished, kept" in output and "plain seed 2: finished, kept" in output
    for run in runs:
        log = (run.parent / f"{run.name}.log").read_text()
        assert f"at step {stopped[run.name]}" in log       # resumed, not restarted
        record = json.loads((run / "compare.json").read_text())
        assert record["updates"] == 300 and record["seed"] == int(run.name[-1])
    seeds = [json.loads((run / "compare.json").read_text())["train_seed"] for run in runs]
    assert seeds == [1, 2]

    page = (out / "report.html").read_text()
    assert "±" in page and "Is the difference real?" in page and "<h2>Verdict: " in page
    assert "The figures of every seed" in page and "2 of 2 seeds" in page
    assert "the diagonal aligner" in page
    markdown = (out / "results.md").read_text()
    assert "**Verdict: " in markdown and "Rule:" in markdown


def member(name, runs, task="translation"):
    return aggregate([{"name": name, "label": name.upper(), "task": task, **run}
                      for run in runs])


def translation_run(seed, hypotheses, references, bleu):
    return {"seed": seed, "scores": {"bleu": bleu, "chrf": bleu}, "updates": 100,
            "epochs": 2, "stopped_by": "max_steps", "hypotheses": hypotheses,
            "references": references}


REFERENCES = [f"a man number {k} rides a red bicycle down the street" for k in range(60)]
GARBLED = [f"dog {k} sleeps" for k in range(60)]


def verdict_for(expect, a_hyps, b_hyps, seeds=3):
    a = member("a", [translation_run(k, a_hyps, REFERENCES, 90.0) for k in range(1, seeds + 1)])
    b = member("b", [translation_run(k, b_hyps, REFERENCES, 10.0) for k in range(1, seeds + 1)])
    suite = Suite("s", "translation", "t", path=None, members=[], expect=expect)  # type: ignore
    return claim_verdict(suite.expect, [a, b]), [a, b]


def test_a_known_difference_is_reproduced_and_two_copies_of_one_system_are_not_told_apart():
    better = [Expectation("better", "a", "b", "bleu")]
    verdict, records = verdict_for(better, REFERENCES, GARBLED)
    assert verdict.outcome == "reproduced", verdict.lines
    assert "3 and 3 seeds" in verdict.lines[0] and "95% CI" in verdict.lines[0]
    tests = pairwise(records, ("bleu", "chrf"))
    assert [test.direction for test in tests] == [">", ">"]

    same, _ = verdict_for(better, REFERENCES, REFERENCES)
    assert same.outcome == "inconclusive", same.lines
    matches, _ = verdict_for([Expectation("matches", "a", "b", "bleu", 1.0)], REFERENCES,
                             REFERENCES)
    assert matches.outcome == "reproduced", matches.lines
    # "as good as" without a margin cannot be tested: absence of evidence is not a match
    no_margin, _ = verdict_for([Expectation("matches", "a", "b", "bleu")], REFERENCES, REFERENCES)
    assert no_margin.outcome == "inconclusive" and "no margin" in no_margin.lines[0]
    # a large gap with one or two seeds is never a match
    for seeds in (1, 2):
        gap, _ = verdict_for([Expectation("matches", "a", "b", "bleu", 1.0)], REFERENCES,
                             GARBLED, seeds=seeds)
        assert gap.outcome in ("not reproduced", "inconclusive"), gap.lines
    worse, _ = verdict_for(better, GARBLED, REFERENCES)
    assert worse.outcome == "not reproduced"
    # "no loss": a far better A is no worse (where "as good as" is not reproduced); a far worse
    # one is not reproduced; two copies of one system are no worse than each other
    no_worse = [Expectation("no_worse", "a", "b", "bleu", 1.0)]
    for hyps_a, hyps_b, outcome in ((REFERENCES, GARBLED, "reproduced"),
                                    (GARBLED, REFERENCES, "not reproduced"),
                                    (REFERENCES, REFERENCES, "reproduced")):
        found, _ = verdict_for(no_worse, hyps_a, hyps_b)
        assert found.outcome == outcome, found.lines
        assert "no worse than" in found.lines[0] and "by more than 1" in found.lines[0]
    gained, _ = verdict_for([Expectation("matches", "a", "b", "bleu", 1.0)], REFERENCES, GARBLED)
    assert gained.outcome == "not reproduced"


def test_a_bleu_claim_below_the_floor_is_not_decided():
    """news-alignment's "no loss of BLEU" at 1.04 against 2.30: a margin of 1 BLEU allows
    losing nearly everything, so below BLEU 10 a claim on BLEU is not decided."""
    low = [member(name, [translation_run(k, GARBLED, REFERENCES, bleu) for k in (1, 2, 3)])
           for name, bleu in (("a", 1.04), ("b", 2.30))]
    for kind, margin in (("no_worse", 1.0), ("matches", 1.0), ("better", None)):
        found = claim_verdict([Expectation(kind, "a", "b", "bleu", margin)], low)
        assert found.outcome == "inconclusive", found.lines
        assert "not decidable at this quality" in found.lines[0], found.lines
        assert "BLEU 1.04" in found.lines[0] and "floor of 10" in found.lines[0]
    # chrF has no floor; at the floor itself a claim is decided (test above: b reads 10.0)
    chrf = claim_verdict([Expectation("better", "a", "b", "chrf")], low)
    assert "not decidable at this quality" not in chrf.lines[0]


def test_members_scored_against_other_references_are_not_compared():
    # A reverse member translates into the other language: its texts are not the others'.
    a = member("a", [translation_run(k, REFERENCES, REFERENCES, 90.0) for k in (1, 2, 3)])
    b = member("b", [translation_run(k, GARBLED, REFERENCES, 10.0) for k in (1, 2, 3)])
    other = [f"ein Mann Nummer {k} fährt ein rotes Fahrrad" for k in range(60)]
    turned = member("turned", [translation_run(k, GARBLED, other, 10.0) for k in (1, 2, 3)])
    tests = pairwise([a, b, turned], ("bleu", "chrf"))
    assert {(test.a, test.b) for test in tests} == {("a", "b")}


def test_a_score_known_only_per_run_is_tested_across_seeds():
    def lm(name, values):
        return member(name, [{"seed": k + 1, "scores": {"perplexity": v}}
                             for k, v in enumerate(values)], task="lm")
    suite = Suite("s", "lm", "t", path=None, members=[],  # type: ignore[arg-type]
                  expect=[Expectation("better", "a", "b", "perplexity")])
    # Welch: t = 4.9 on 4 df (p = 0.008); t = 4.24 on 2 df (p = 0.051); one seed decides nothing
    assert claim_verdict(suite.expect, [lm("a", [30, 31, 29]), lm("b", [33, 34, 35])]).outcome == \
        "reproduced"
    assert claim_verdict(suite.expect, [lm("a", [30, 31]), lm("b", [33, 34])]).outcome == \
        "inconclusive"
    assert claim_verdict(suite.expect, [lm("a", [20]), lm("b", [90])]).outcome == "inconclusive"
    assert claim_verdict(suite.expect, [lm("a", [30, 36, 29]), lm("b", [33, 34, 35])]).outcome == \
        "inconclusive"


def test_aggregate_gives_means_spreads_and_why_each_seed_stopped():
    record = member("a", [{"seed": 1, "scores": {"bleu": 20.0}, "updates": 100, "epochs": 3,
                           "stopped_by": "max_steps", "curve": [(50, 1.0)]},
                          {"seed": 2, "scores": {"bleu": 24.0}, "updates": 80, "epochs": 2,
                           "stopped_by": "early_stopping", "curve": [(50, 2.0)]}])
    assert record["scores"]["bleu"] == 22.0 and record["spread"]["bleu"].text(2) == \
        "22.00 ± 2.83"
    assert record["seeds"] == 2 and record["curves"] == [[(50, 1.0)], [(50, 2.0)]]
    assert stop_summary(record["runs"]) == ("max_steps (1 of 2 seeds; 100 updates, 3 epochs); "
                                            "early_stopping (1 of 2 seeds; 80 updates, 2 "
                                            "epochs)")


BUDGET_KEYS = {"train.max_steps", "train.max_epochs", "train.max_minutes",
               "train.early_stopping.patience"}


def write(tmp_path, **changes):
    suite = yaml.safe_load(open(suite_file(tmp_path, tmp_path)).read())
    if "budget" in changes:   # the budget decides these for every member
        for overrides in [suite["set"], *(member["set"] for member in suite["members"])]:
            for key in BUDGET_KEYS & set(overrides):
                del overrides[key]
    suite.update(changes)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def test_budgets_are_updates_or_convergence_and_the_claim_names_real_members(tmp_path):
    converge = load_suite(str(write(tmp_path, budget={"converge": {"patience": 3,
                                                                   "max_updates": 900}})))
    assert converge.budget == Budget(900, 3)
    assert "train.early_stopping.patience=3" in converge.overrides_for(converge.members[0])
    for budget, message in (({"minutes": 5}, "never wall time"),
                            ({"converge": {"patience": 3}}, "needs max_updates"),
                            ({"updates": 0},
                             "updates must be a whole number from 1 to 10,000,000")):
        with pytest.raises(ConfigError, match=message):
            load_suite(str(write(tmp_path, budget=budget)))
    for expect, message in (([{"better": "plain", "than": "nobody", "metric": "bleu"}],
                             "no member 'nobody'"),
                            ([{"better": "plain", "than": "bahdanau", "on": "bleu"}],
                             "give {better: A, than: B, metric: M}"),
                            ([{"better": "plain", "than": "diagonal", "metric": "bleu"}],
                             "diagonal aligner"),
                            ([{"no_worse": "plain", "than": "bahdanau", "metric": "bleu"}],
                             r"a no_worse claim needs a margin \(give \{no_worse: A, than: B, "
                             r"metric: M, margin: D\}\)"),
                            ([{"better": "plain", "than": "bahdanau", "metric": "bleu",
                               "margin": 1.0}], "give {better"),
                            ([{"no_worse": "plain", "than": "bahdanau", "metric": "bleu",
                               "margin": -1}], "margin is a positive number")):
        with pytest.raises(ConfigError, match=message):
            load_suite(str(write(tmp_path, expect=expect)))
    no_loss = load_suite(str(write(tmp_path, expect=[
        {"no_worse": "plain", "than": "bahdanau", "metric": "bleu", "margin": 1}])))
    assert no_loss.expect[0].relation == "no_worse" and no_loss.expect[0].margin == 1.0
    clash = yaml.safe_load(write(tmp_path, budget={"updates": 5}).read_text())
    clash["members"][0]["set"]["train.max_steps"] = 7
    (tmp_path / "clash.yaml").write_text(yaml.safe_dump(clash))
    with pytest.raises(ConfigError, match="member plain set gives train.max_steps, which the "
                                          "budget decides"):
        load_suite(str(tmp_path / "clash.yaml"))
    with pytest.raises(ConfigError, match="seeds must be a whole number from 1 to 100, got 0"):
        load_suite(str(write(tmp_path, seeds=0)))


def test_a_reverse_member_names_an_earlier_member_once(tmp_path):
    members = yaml.safe_load(open(suite_file(tmp_path, tmp_path)).read())["members"]
    turned = {**members[1], "name": "turned", "reverse_of": "bahdanau",
              "example": "2019-03-12"}
    suite = load_suite(str(write(tmp_path, members=[*members, turned])))
    assert suite.reverse_member("bahdanau").name == "turned"
    assert suite.reverse_member("plain") is None
    assert suite.member("turned").example == "2019-03-12" and suite.member("plain").example is None
    for entries, message in (([{**turned, "reverse_of": "nobody"}, *members],
                              "reverse_of must name an earlier member, got 'nobody'"),
                             ([*members, turned, {**turned, "name": "again"}],
                              "member 'bahdanau' already has a reverse member"),
                             ([*members, {**turned, "example": ["2019"]}],
                              "example must be a sentence")):
        with pytest.raises(ConfigError, match=message):
            load_suite(str(write(tmp_path, members=entries)))


def test_a_member_folder_of_the_one_seed_layout_is_named_not_trained_over(tmp_path,
                                                                         dates_dir, capsys):
    out = tmp_path / "out"
    (out / "plain").mkdir(parents=True)
    (out / "plain" / "config.json").write_text("{}")
    suite = suite_file(tmp_path, dates_dir, steps=(10, 10))
    assert main(["compare", str(suite), "--dir", str(out), "--quiet"]) == 2
    assert "one-seed layout" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "plain").iterdir()) == ["config.json"]


def test_the_bottleneck_claim_tests_the_drop_with_length_across_seeds():
    from attnlab.compare.report.page import with_length_drop

    def run(seed, short, long, count=20):
        buckets = [{"label": "0-9", "count": count, "bleu": short},
                   {"label": "10-19", "count": 5, "bleu": 1.0},     # too few: not counted
                   {"label": "50+", "count": count, "bleu": long}]
        return with_length_drop({"seed": seed, "scores": {"bleu": short}, "buckets": buckets})

    attention = member("a", [run(1, 23.0, 23.9), run(2, 22.5, 22.0), run(3, 23.4, 23.1)])
    plain = member("b", [run(1, 14.0, 8.2), run(2, 14.5, 7.9), run(3, 13.8, 8.8)])
    assert [r["scores"]["bleu_drop"] for r in plain["runs"]] == pytest.approx([5.8, 6.6, 5.0])
    suite = Suite("s", "translation", "t", path=None, members=[],  # type: ignore[arg-type]
                  expect=[Expectation("better", "a", "b", "bleu_drop")])
    found = claim_verdict(suite.expect, [attention, plain])
    assert found.outcome == "reproduced" and "lower is better" in found.lines[0], found.lines
    # a bucket of fewer than MIN_BUCKET examples is no evidence: no drop, nothing decided
    thin = member("b", [run(k, 20.0, 10.0, count=3) for k in (1, 2, 3)])
    assert "bleu_drop" not in thin["runs"][0]["scores"]
    thin_found = claim_verdict(suite.expect, [attention, thin])
    assert thin_found.outcome == "inconclusive" and "no bleu_drop" in thin_found.lines[0]


def test_a_new_kind_of_claim_is_one_entry_of_the_table(tmp_path, monkeypatch):
    """`worse: A, than: B` added to RELATIONS alone: the suite file takes it, the verdict decides
    it and the rule names it, with no other code."""
    from attnlab.compare.stats import claims
    from attnlab.compare.stats.verdicts import rules

    def worse(test, _):
        outcome = {"<": "reproduced", ">": "not reproduced"}.get(test.direction, "inconclusive")
        return outcome, test.finding

    monkeypatch.setitem(claims.RELATIONS, "worse", claims.Relation(
        "than", "none", "worse than", "", "A claimed 'A worse than B' is the mirror of better.",
        worse))
    suite = load_suite(str(write(tmp_path, expect=[
        {"worse": "plain", "than": "bahdanau", "metric": "bleu"}])))
    assert suite.expect[0] == Expectation("worse", "plain", "bahdanau", "bleu")
    verdict, _ = verdict_for([Expectation("worse", "a", "b", "bleu")], GARBLED, REFERENCES)
    assert verdict.outcome == "reproduced", verdict.lines
    assert verdict.lines[0].startswith("A worse than B on bleu: reproduced")
    assert "mirror of better" in rules()[1]


def test_a_margin_claim_its_seeds_could_not_decide_says_so_with_the_seeds_it_needs():
    """Seeds spread far wider than the margin: 'as good as' within 0.01 cannot be decided at
    3 seeds and says how many it would need; at 2 seeds nothing is decided at all."""
    import numpy as np

    from attnlab.compare.stats.across_seeds import compare_across_seeds, mean_scorer
    from attnlab.compare.stats.claims import RELATIONS
    from attnlab.compare.stats.verdicts import PairTest

    def stats(means):   # (seeds, 50 sentences, 2) of a mean metric
        return np.stack([np.stack([np.full(50, m), np.ones(50)], axis=1) for m in means])

    def decided(a, b, margin, relation="matches"):
        test = PairTest("a", "b", "exact_match", compare_across_seeds(
            stats(a), stats(b), mean_scorer, samples=50), "A", "B")
        claim = Expectation(relation, "a", "b", "exact_match", margin)
        return RELATIONS[relation].decide(test, claim)[0]

    wide = decided([0.50, 0.58, 0.46], [0.52, 0.44, 0.56], 0.01)
    assert wide.startswith("undecidable at 3 seeds (needs about "), wide
    assert int(wide.split("about ")[1].rstrip(")")) > 3
    assert decided([0.50, 0.58], [0.52, 0.44], 0.01) == "undecidable at 2 seeds (needs at least 3)"
    assert decided([0.50, 0.58, 0.46], [0.52, 0.44, 0.56], 0.01, "no_worse").startswith(
        "undecidable at 3 seeds")
    # tight seeds, a generous margin: decided as before
    assert decided([0.500, 0.501, 0.499], [0.500, 0.502, 0.498], 0.1) == "reproduced"


@pytest.mark.slow
def test_the_same_runs_come_out_of_two_sittings_and_of_jobs_two(tmp_path, dates_dir):
    """Determinism: one config and seed trained twice (one thread each) gives byte-identical
    weights, and --jobs 2 gives the runs --jobs 1 gives; only wall-clock fields differ."""
    suite = str(seeded_suite(tmp_path, dates_dir, steps=(10, 10)))
    outs = [tmp_path / name for name in ("one", "again", "two-jobs")]
    for out, jobs in zip(outs, ("1", "1", "2"), strict=True):
        process = attnlab("compare", suite, "--dir", str(out), "--only", "bahdanau",
                          "--jobs", jobs)
        assert process.wait(timeout=300) == 0, process.stdout.read()
    for seed in (1, 2):
        for name in ("last/model.safetensors", "best/model.safetensors", "src_vocab.json",
                     "tgt_vocab.json", "config.json"):
            found = {(out / "bahdanau" / f"seed-{seed}" / name).read_bytes() for out in outs}
            assert len(found) == 1, f"seed {seed}: {name} differs"
        records = [json.loads((out / "bahdanau" / f"seed-{seed}" / "compare.json").read_text())
                   for out in outs]
        assert len({json.dumps(record["scores"]) for record in records}) == 1
        assert len({json.dumps(record["hypotheses"]) for record in records}) == 1


def test_adjusted_tests_print_a_simultaneous_interval_that_agrees_with_holm():
    close = [f"a man number {k} rides a red bike down the street" for k in range(60)]
    records = [member(name, [translation_run(k, hyps, REFERENCES, 50.0) for k in (1, 2, 3)])
               for name, hyps in (("a", REFERENCES), ("b", close), ("c", GARBLED))]
    tests = pairwise(records, ("bleu", "chrf"))
    assert len(tests) == 6 and all(test.family == 6 for test in tests)
    for test in tests:
        low, high = test.comparison.interval()
        joint_low, joint_high = test.comparison.interval(1 - 0.05 / 6)
        assert joint_low <= low <= high <= joint_high        # wider: it holds for all six
        assert "simultaneous 95% CI over the 6 tests" in test.numbers
        if joint_low > 0 or joint_high < 0:                   # Bonferroni rejects: so does Holm
            assert test.p_adjusted < 0.05


def test_bleu_drop_is_tested_by_sentence_with_the_test_sets_noise():
    """The bottleneck claim's measure: BLEU of the shortest bucket minus the longest's, from
    each sentence's statistics, so the bootstrap over sentences adds the test set's noise."""
    from attnlab.compare.report.page import with_length_drop
    from attnlab.compare.stats.verdicts import statistics, test_pair

    words = [5] * 30 + [25] * 30
    buckets = [{"lo": 0.0, "hi": 10.0, "count": 30, "bleu": None, "label": "0-9"},
               {"lo": 20.0, "hi": None, "count": 30, "bleu": None, "label": "20+"}]

    def run(seed, long_right):
        hyps = REFERENCES[:30] + [ref if k < long_right else GARBLED[k]
                                  for k, ref in enumerate(REFERENCES[30:])]
        found = {**translation_run(seed, hyps, REFERENCES, 50.0), "source_words": words,
                 "buckets": [dict(bucket) for bucket in buckets]}
        for bucket, part in zip(found["buckets"], (slice(0, 30), slice(30, 60)), strict=True):
            bucket["bleu"] = corpus_bleu(hyps[part], REFERENCES[part])
        return with_length_drop(found)

    steady = member("steady", [run(k, 28 + k % 2) for k in (1, 2, 3)])
    falls = member("falls", [run(k, 10 + k) for k in (1, 2, 3)])
    stats_a, stats_b, score = statistics(falls, steady, "bleu_drop")
    assert stats_a.shape == (3, 60, 2 * stats_a.shape[-1] // 2)
    by_run = [r["scores"]["bleu_drop"] for r in falls["runs"]]
    assert np.allclose(score(stats_a.sum(axis=1)), by_run)    # the same drop, by sentence
    test = test_pair(falls, steady, "bleu_drop", {})
    assert test.comparison.test_variance > 0 and test.direction == "<"   # falls further
    without = member("old", [{k: v for k, v in r.items() if k != "source_words"}
                             for r in steady["runs"]])
    assert statistics(falls, without, "bleu_drop")[2] is mean_scorer   # the seeds alone


def corpus_bleu(hypotheses, references):
    from sacrebleu.metrics import BLEU

    return BLEU().corpus_score(hypotheses, [references]).score
