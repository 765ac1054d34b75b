"""`attnlab compare SUITE --explain`: each finished run's explanation record, kept while the
suite's explain block is what made it, and the report's claims across seeds; the claims'
tests on hand-made records whose truth is known."""

import html
import json
import re

import numpy as np
import pytest
import yaml

from attnlab.cli import main
from attnlab.compare.report.explanations import SOURCE_CLAIMS as CLAIMS
from attnlab.compare.report.explanations import (
    aer_rows,
    claim_outcome,
    extraction_test_rows,
    faithfulness_rows,
)
from attnlab.compare.stats.explanations import EXPLANATION_CLAIMS, Explained, claim_tests
from attnlab.compare.stats.explanations import reading_tests as extraction_tests
from attnlab.compare.suite.definition import load_suite
from attnlab.errors import ConfigError
from attnlab.translation.explanation_scores import VERSION

from .test_compare import suite_file

EXPLAIN = {"pairs": 6, "sentences": 3, "adversarial": 1, "steps": 4}


def explained_suite(tmp_path, data_dir, **explain):
    path = suite_file(tmp_path, data_dir, steps=(10, 40))
    suite = yaml.safe_load(path.read_text())
    suite.update(seeds=2, explain={**EXPLAIN, **explain})
    path.write_text(yaml.safe_dump(suite))
    return path


@pytest.mark.slow
def test_explain_records_every_finished_run_keeps_them_and_reports_the_claims(
        tmp_path, dates_dir, capsys):
    out = tmp_path / "out"
    suite = str(explained_suite(tmp_path, dates_dir))
    assert main(["compare", suite, "--dir", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", suite, "--dir", str(out), "--explain", "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "bahdanau seed 2: explained in" in said and "plain seed 1: explained in" in said
    plain = json.loads((out / "plain" / "seed-1" / "explain.json").read_text())
    assert plain["attention"] is False                 # nothing to explain, and it says so
    record = json.loads((out / "bahdanau" / "seed-1" / "explain.json").read_text())
    assert record["asked"] == {**EXPLAIN, "version": VERSION} and record["settings"]["pairs"] == 6
    extractions = record["extractions"]
    assert extractions["pairs"] + extractions["skipped"] == 6
    assert {"attention", "attention >= 0.3", "attention, row t-1", "attention, row t+1",
            "attention x value norm", "gradient", "integrated_gradients", "erasure",
            "diagonal"} == set(extractions["counts"])
    gaps = extractions["integrated_gradients"]       # every pair's completeness gap, recorded
    assert len(gaps["gap"]) == len(gaps["points"]) == extractions["pairs"]
    assert all(gap >= 0 for gap in gaps["gap"]) and all(n >= 1 for n in gaps["points"])
    assert extractions["gold"]["kind"] == "dates" and extractions["version"] >= 2
    faith = record["faithfulness"]
    assert len(faith["steps"]) == 3 and len(faith["adversarial_jsd"]) == 1
    assert all(len(flips) == 3 for flips in faith["flips"].values())
    assert len(faith["flips"]) == len(faith["erased_weight"]) == 5   # every control
    for figure in ("comprehensiveness", "sufficiency"):
        assert {name: len(found) for name, found in faith[figure].items()} == \
            {"attention": 3, "random": 3}
    assert set(faith["randomisation"]) == {"attention", "gradient", "integrated_gradients",
                                           "erasure"}
    scored = json.loads((out / "bahdanau" / "seed-1" / "compare.json").read_text())
    assert len(record["uniform"]["hypotheses"]) == len(scored["hypotheses"]) == 30

    page = (out / "report.html").read_text()
    assert "Is attention an alignment? Is it an explanation?" in page
    # the page opens with the answers, each claim over the members, before the claim's verdict
    opening = page.index("Is it an explanation? In short")
    assert opening < page.index("Made by") and opening < page.index("<h2>Findings")
    first = EXPLANATION_CLAIMS[CLAIMS[0]].text
    assert re.search(rf"{re.escape(html.escape(first))}: (reproduced for [01] of 1 members)",
                     page)
    for claim in CLAIMS:
        assert html.escape(f"Bahdanau: {EXPLANATION_CLAIMS[claim].text}: ") in page
    assert "no attention: attention is" not in page     # a member without attention is left out
    markdown = (out / "results.md").read_text()
    assert "#### Is attention an alignment?" in markdown and "row t+1" in markdown
    assert markdown.splitlines()[4].endswith("In short:**")
    assert "ERASER: comprehensiveness and sufficiency against a random ranking" in markdown
    assert "Model randomisation: each view against the randomised model's" in markdown
    assert "Integrated gradients' completeness:" in markdown

    stamp = (out / "bahdanau" / "seed-1" / "explain.json").stat().st_mtime_ns
    assert main(["compare", suite, "--dir", str(out), "--explain", "--quiet"]) == 0
    assert "bahdanau seed 1: explained, kept" in capsys.readouterr().out
    assert (out / "bahdanau" / "seed-1" / "explain.json").stat().st_mtime_ns == stamp
    # Another explain block: the records it did not make are made again.
    other = str(explained_suite(tmp_path, dates_dir, sentences=2))
    assert main(["compare", other, "--dir", str(out), "--explain", "--quiet"]) == 0
    again = json.loads((out / "bahdanau" / "seed-1" / "explain.json").read_text())
    assert len(again["faithfulness"]["steps"]) == 2


@pytest.mark.slow
def test_a_reverse_member_is_read_with_its_forward_member_once_it_is_trained(
        tmp_path, dates_dir, capsys):
    from attnlab.explain.methods import JOINED, REVERSE

    path = explained_suite(tmp_path, dates_dir, sentences=1)
    suite = yaml.safe_load(path.read_text())
    forward = suite["members"][1]
    turned = {**forward, "name": "turned", "label": "Bahdanau, dates written back",
              "set": {**forward["set"], "data.src_lang": "tgt", "data.tgt_lang": "src"},
              "reverse_of": "bahdanau", "example": "2019-03-12"}
    suite.update(seeds=1, members=[forward, turned])
    path.write_text(yaml.safe_dump(suite))
    out = tmp_path / "out"
    assert main(["compare", str(path), "--dir", str(out), "--quiet", "--only", "bahdanau"]) == 0
    assert main(["compare", str(path), "--dir", str(out), "--explain", "--quiet"]) == 0
    alone = json.loads((out / "bahdanau" / "seed-1" / "explain.json").read_text())
    assert "reverse" not in alone["asked"] and REVERSE not in alone["extractions"]["counts"]
    # Once the reverse member is trained, the forward record is made again with both ways.
    assert main(["compare", str(path), "--dir", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(path), "--dir", str(out), "--explain", "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "bahdanau seed 1: explaining" in said
    both = json.loads((out / "bahdanau" / "seed-1" / "explain.json").read_text())
    assert both["asked"]["reverse"] == "turned"
    assert {REVERSE, *JOINED} <= set(both["extractions"]["counts"])
    assert both["extractions"]["pairs"] + both["extractions"]["skipped"] == 6
    scored = json.loads((out / "turned" / "seed-1" / "compare.json").read_text())
    assert scored["example"]["source_tokens"][:4] == list("2019")   # its own example
    own = json.loads((out / "turned" / "seed-1" / "explain.json").read_text())
    assert own["extractions"]["gold"]["kind"] == "dates"   # its gold, turned round
    markdown = (out / "results.md").read_text()
    assert "attention, both directions grow-diag-final" in markdown
    assert "Every reading against the diagonal and against attention" in markdown
    # The reverse member translates into another language: listed, never paired with the other.
    assert "Trained the other way, so not ranked with the others" in markdown
    assert "Pairwise across seeds" not in markdown


def test_explain_trains_nothing_so_it_refuses_only_seed_and_retrain(tmp_path, dates_dir):
    suite = str(explained_suite(tmp_path, dates_dir))
    for flag in (["--only", "bahdanau"], ["--seed", "1"], ["--retrain", "plain"]):
        with pytest.raises(SystemExit, match="--explain trains nothing"):
            main(["compare", suite, "--dir", str(tmp_path / "out"), "--explain", *flag])


def test_a_run_not_yet_trained_is_named_and_left_for_later(tmp_path, dates_dir, capsys):
    from attnlab.compare.run.explain_records import explain_suite
    from attnlab.compare.run.layout import RunOptions

    suite = load_suite(str(explained_suite(tmp_path, dates_dir)))
    assert explain_suite(suite, tmp_path / "empty", RunOptions(progress=False)) == 0
    assert "not finished training, so not explained: plain seed 1, bahdanau seed 1" in \
        capsys.readouterr().out


@pytest.mark.parametrize("block, says", [
    ({"pairz": 3}, "unknown key 'pairz'; did you mean 'pairs'?"),
    ({"pairs": 0}, "explain: pairs must be a whole number from 1 to 1,000,000, got 0"),
    ({"seeds": 1.5}, "explain: seeds must be a whole number from 1 to 100, got 1.5"),
    ({"methods": ["saliency"]}, "explain: methods is a list of gradient, integrated_gradients, "
                                "erasure, got ['saliency']"),
])
def test_the_explain_block_is_checked_as_the_suite_loads(tmp_path, dates_dir, block, says):
    path = suite_file(tmp_path, dates_dir)
    suite = yaml.safe_load(path.read_text())
    suite["explain"] = block
    path.write_text(yaml.safe_dump(suite))
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_suite(str(path))


# Hand-made records: n pairs / sentences per seed, with the truth set by construction.
N = 80


def record(seed, *, attention_links, diagonal_links, top_flips, random_flips, tau):
    """One seed's explanation record: per pair (|A&S|, |A&P|, |A|, |S|) counts with
    `attention_links` of 4 links right, the diagonal `diagonal_links`; per sentence 10 steps
    of which top_flips / random_flips flipped (the second most attended as the random one);
    tau per sentence; ERASER's figures per sentence, attention's comprehensiveness top_flips
    and sufficiency random_flips, a random ranking's the other way round."""
    rng = np.random.default_rng(seed)

    def counts(right):
        hits = np.clip(right + rng.integers(-1, 2, N), 0, 4)
        return [[int(h), int(h), 4, 4] for h in hits]

    def flips(rate):
        return [int(f) for f in rng.binomial(10, rate, N)]

    def figures(mean):
        return list(mean + 0.1 * rng.standard_normal(N))

    return {"attention": True, "settings": {"adversarial": 1, "steps": 4},
            "extractions": {"gold": {"name": "dates task gold x", "kind": "dates",
                                     "title": "the dates task's gold", "short": "dates"},
                            "unit": "characters", "pairs": N,
                            "skipped": 0, "counts": {"attention": counts(attention_links),
                                                     "diagonal": counts(diagonal_links)}},
            "faithfulness": {"steps": [10] * N, "flips": {
                "top_attention": flips(top_flips), "random": flips(random_flips),
                "top_gradient": flips(top_flips), "second_attention": flips(random_flips)},
                "comprehensiveness": {"attention": figures(top_flips),
                                      "random": figures(random_flips)},
                "sufficiency": {"attention": figures(random_flips),
                                "random": figures(top_flips)},
                "agreement": {"gradient": list(tau + 0.2 * rng.standard_normal(N))},
                "permutation_tvd": [0.1] * N, "adversarial_jsd": [0.5]},
            "uniform": {"hypotheses": ["x"] * 4, "references": ["a b c d"] * 4}}


def member(name, seeds=3, **truth):
    runs = [{"hypotheses": ["a b c d"] * 4,
             "references": ["a b c d"] * 4} for _ in range(seeds)]
    return Explained(name, name.title(), [record(s, **truth) for s in range(1, seeds + 1)], runs)


def test_each_claim_is_found_where_true_refuted_where_false_and_undecided_on_one_seed():
    aligned = member("aligned", attention_links=3, diagonal_links=1, top_flips=0.5,
                     random_flips=0.05, tau=0.4)
    backwards = member("backwards", attention_links=1, diagonal_links=3, top_flips=0.1,
                       random_flips=0.1, tau=-0.4)
    lonely = member("lonely", seeds=1, attention_links=3, diagonal_links=1, top_flips=0.5,
                    random_flips=0.05, tau=0.4)
    claim_tests([aligned, backwards, lonely], CLAIMS)
    assert [claim_outcome(aligned.tests[c]) for c in CLAIMS] == ["reproduced"] * len(CLAIMS)
    outcomes = [claim_outcome(backwards.tests[c]) for c in CLAIMS]
    assert outcomes == ["not reproduced", "not reproduced", *["inconclusive"] * 4]
    assert [claim_outcome(lonely.tests[c]) for c in CLAIMS] == ["inconclusive"] * len(CLAIMS)
    assert all(t.p_adjusted is not None for t in aligned.tests.values())   # Holm-adjusted
    rows = aer_rows([aligned, backwards])
    assert rows[0][:3] == ["member", "seeds", "attention"] and rows[1][1] == "3"
    assert rows[0][-1] == "diagonal"
    table = faithfulness_rows([aligned])
    assert table[1][-1].startswith("100.0 (")     # all of BLEU lost with uniform attention


def test_equal_flip_rates_are_declared_different_at_most_at_the_level():
    """Under a true null (top attended and random flip alike) the claim's test rejects at
    about alpha: 40 simulated 3-seed members."""
    rejected = 0
    members = [member(f"m{k}", attention_links=2, diagonal_links=2, top_flips=0.2,
                      random_flips=0.2, tau=0.0) for k in range(40)]
    for k, found in enumerate(members):   # distinct random draws per member
        for seed, rec in enumerate(found.records):
            rng = np.random.default_rng(1000 * k + seed)
            for which in ("top_attention", "random"):
                rec["faithfulness"]["flips"][which] = [int(f) for f in rng.binomial(10, 0.2, N)]
    claim_tests(members, CLAIMS)
    for found in members:
        test = found.tests[CLAIMS[2]]
        rejected += test.comparison.p_value < 0.05
    assert rejected <= 6, rejected        # 40 tests at 0.05: 2 expected, 6 is p < 0.02


def with_reading(found, name, right, pairs=N):
    """Add one reading's per-pair counts to every seed of a hand-made member: `right` of 4
    links right per pair, give or take one."""
    for seed, rec in enumerate(found.records, start=1):
        rng = np.random.default_rng(100 + seed)
        hits = np.clip(right + rng.integers(-1, 2, pairs), 0, 4)
        rec["extractions"]["counts"][name] = [[int(h), int(h), 4, 4] for h in hits]
    return found


def test_every_reading_is_tested_against_the_diagonal_and_attention_across_seeds():
    """A reading better than both is found lower than both; one between them is lower than
    attention only; one seed decides nothing; a reading on other pairs is not tested."""
    two_ways = member("two", attention_links=2, diagonal_links=3, top_flips=0.5,
                      random_flips=0.05, tau=0.4)
    with_reading(two_ways, "attention, both directions grow-diag-final", 4)
    with_reading(two_ways, "erasure", 2.6)
    with_reading(two_ways, "gradient", 3, pairs=N - 1)       # not the same pairs
    lonely = with_reading(member("lonely", seeds=1, attention_links=2, diagonal_links=3,
                                 top_flips=0.5, random_flips=0.05, tau=0.4), "erasure", 4)
    tests = extraction_tests([two_ways, lonely])
    joined = ("two", "attention, both directions grow-diag-final")
    assert tests[(*joined, "diagonal")].direction == ">"       # lower AER: better
    assert tests[(*joined, "attention")].direction == ">"
    assert tests[("two", "attention", "diagonal")].direction == "<"
    assert ("two", "attention", "attention") not in tests
    assert ("two", "gradient", "diagonal") not in tests
    assert not tests[("lonely", "erasure", "diagonal")].comparison.decided
    assert all(t.p_adjusted is not None for t in tests.values() if t.comparison.decided)
    rows = extraction_test_rows([two_ways, lonely])
    by_reading = {(row[0], row[1]): row for row in rows[1:]}
    gdf = by_reading[("Two", "attention, both directions grow-diag-final")]
    assert gdf[2] == "3" and gdf[4].endswith(": lower") and gdf[5].endswith(": lower")
    assert by_reading[("Lonely", "erasure")][4].endswith("(< 3 seeds)")
    assert by_reading[("Two", "attention")][5] == "-"


def test_a_reading_no_better_than_attention_is_called_lower_at_most_at_the_level():
    """Under a true null (a reading drawn exactly as attention is) the table's test rejects at
    most at about alpha: 40 simulated 3-seed members."""
    rejected = 0
    for k in range(40):
        found = member(f"m{k}", attention_links=2, diagonal_links=2, top_flips=0.2,
                       random_flips=0.2, tau=0.0)
        for seed, rec in enumerate(found.records):
            rng = np.random.default_rng(5000 + 100 * k + seed)
            for name in ("attention", "erasure"):
                hits = np.clip(2 + rng.integers(-1, 2, N), 0, 4)
                rec["extractions"]["counts"][name] = [[int(h), int(h), 4, 4] for h in hits]
        test = extraction_tests([found])[(f"m{k}", "erasure", "attention")]
        rejected += test.comparison.p_value < 0.05
    assert rejected <= 6, rejected        # 40 tests at 0.05: 2 expected, 6 is p < 0.02


def test_a_run_another_process_holds_is_left_to_it(tmp_path, dates_dir, capsys):
    """Two --explain commands share a suite: a run whose lock is held is skipped and named."""
    from attnlab.compare.run.explain_records import explain_suite
    from attnlab.compare.run.layout import RunOptions
    from attnlab.compare.run.lock import run_lock

    suite = load_suite(str(explained_suite(tmp_path, dates_dir)))
    run_dir = tmp_path / "out" / "plain" / "seed-1"
    run_dir.mkdir(parents=True)
    (run_dir / "compare.json").write_text("{}")   # finished, as far as --explain can tell
    with run_lock(run_dir):
        assert explain_suite(suite, tmp_path / "out", RunOptions(progress=False)) == 0
    said = capsys.readouterr().out
    assert "[1/1] plain seed 1: another process holds it; left to that one" in said
    assert "held by another process, so not explained here: plain seed 1" in said
    assert not (run_dir / "explain.json").exists()
