"""The claims and tables of the faithfulness controls (erasure against a position of comparable
weight, ERASER against a random ranking, the randomisation check) on hand-made records whose
truth is known: each found where true, refuted where false, at most at the level under a true
null, and printed beside the old random control."""

from __future__ import annotations

import numpy as np

from attnlab.compare.report.controls import control_blocks, eraser_rows, weight_rows
from attnlab.compare.report.explanations import (
    PAGES,
    SELF_CLAIMS,
    SOURCE_CLAIMS,
    claim_outcome,
    faithfulness_rows,
)
from attnlab.compare.stats.across_seeds import PAIRED_METHOD
from attnlab.compare.stats.explanations import EXPLANATION_CLAIMS, claim_tests

from .test_explain_suite import N, member

NEW = ("erasure, second", "comprehensiveness", "sufficiency")


def controlled(name, *, top=0.5, second=0.05, comprehensive=(0.3, 0.1),
               sufficient=(0.1, 0.3), seeds=3, seed=0):
    """A hand-made member (tests/compare/test_explain_suite.py) whose records hold the
    controls: per sentence 10 steps, `top` / `second` of them flipping with the top / second
    most attended erased; ERASER's per-sentence figures around (attention, random); the weight
    erased 0.7 a step for the top attended, 0.2 for the second; tau with the randomised model
    around 0.1 for attention."""
    found = member(name, seeds=seeds, attention_links=3, diagonal_links=1, top_flips=top,
                   random_flips=0.05, tau=0.4)
    for index, record in enumerate(found.records):
        rng = np.random.default_rng(1000 * seed + index)
        faith = record["faithfulness"]
        faith["flips"]["top_attention"] = [int(f) for f in rng.binomial(10, top, N)]
        faith["flips"]["second_attention"] = [int(f) for f in rng.binomial(10, second, N)]
        faith["erased_weight"] = {"top_attention": [7.0] * N, "second_attention": [2.0] * N}
        for figure, (own, random) in (("comprehensiveness", comprehensive),
                                      ("sufficiency", sufficient)):
            faith[figure] = {"attention": list(own + 0.1 * rng.standard_normal(N)),
                             "random": list(random + 0.1 * rng.standard_normal(N))}
        faith["randomisation"] = {"attention": list(0.1 + 0.2 * rng.standard_normal(N))}
    return found


def outcomes(found):
    return [claim_outcome(found.tests.get(claim)) for claim in NEW]


def test_the_new_claims_are_on_both_pages_and_tested_paired_by_run():
    assert set(NEW) <= set(SOURCE_CLAIMS)
    assert {"erasure, second earlier word", "comprehensiveness", "sufficiency"} <= \
        set(SELF_CLAIMS)
    assert all(EXPLANATION_CLAIMS[claim].paired for claim in NEW)
    found = controlled("faithful")
    claim_tests([found], SOURCE_CLAIMS)
    assert all(found.tests[claim].method == PAIRED_METHOD for claim in NEW)


def test_each_control_claim_is_found_where_true_and_refuted_where_false():
    right = controlled("right")
    # the weight split between two positions that both decide: the second matters as much;
    # attention's ranking worse than chance on both ERASER figures
    split = controlled("split", top=0.5, second=0.5, comprehensive=(0.1, 0.3),
                       sufficient=(0.3, 0.1), seed=5)
    contrary = controlled("contrary", top=0.1, second=0.4, seed=2)
    lonely = controlled("lonely", seeds=1, seed=3)
    claim_tests([right, split, contrary, lonely], SOURCE_CLAIMS)
    assert outcomes(right) == ["reproduced"] * 3
    assert outcomes(split) == ["inconclusive", "not reproduced", "not reproduced"]
    assert claim_outcome(split.tests["erasure"]) == "reproduced"   # the old control misses it
    assert outcomes(contrary)[0] == "not reproduced"
    assert outcomes(lonely) == ["inconclusive"] * 3


def test_a_top_position_no_different_from_the_second_is_called_different_at_most_at_the_level():
    """40 simulated 3-seed members whose top and second most attended flip alike."""
    members = [controlled(f"m{k}", top=0.2, second=0.2, seed=10 + k) for k in range(40)]
    claim_tests(members, ("erasure, second",))
    rejected = sum(m.tests["erasure, second"].comparison.p_value < 0.05 for m in members)
    assert rejected <= 6, rejected      # 40 tests at 0.05: 2 expected, 6 is p < 0.02


def test_the_tables_print_the_controls_beside_the_random_one_with_their_weights():
    found = controlled("faithful")
    header, row = faithfulness_rows([found])
    assert header[1:6] == ["flips: top attended %", "random %", "top gradient %",
                           "second attended %", "random of weight %"]
    assert row[4].startswith("5.")                     # the second flips at about 5%
    weights = weight_rows([found], lambda stats, scorer, digits:
                          f"{scorer(stats.sum(axis=1)).mean():.{digits}f}")
    assert weights == [["member", "top attended", "second attended"],
                       ["Faithful", "0.700", "0.200"]]   # 7 and 2 over 10 steps a sentence
    table = eraser_rows([found], lambda stats, scorer, digits:
                        f"{scorer(stats.sum(axis=1)).mean():.1f}")
    assert table == [["member", "comprehensiveness: attention", "comprehensiveness: random",
                      "sufficiency: attention", "sufficiency: random"],
                     ["Faithful", "0.3", "0.1", "0.1", "0.3"]]
    lines = PAGES["source"].markdown([found], None, "attnlab compare x --dir y")
    text = "\n".join(lines)
    for heading in ("Erasure: the weight of the position erased",
                    "ERASER: comprehensiveness and sufficiency against a random ranking",
                    "Model randomisation: each view against the randomised model's"):
        assert f"{heading}:" in text
    assert "the top attended position's flip rate minus the second most attended's" in text


def test_records_made_before_the_controls_give_no_table_and_no_verdict():
    old = member("old", attention_links=3, diagonal_links=1, top_flips=0.5, random_flips=0.05,
                 tau=0.4)
    for record in old.records:
        for key in ("erased_weight", "comprehensiveness", "sufficiency", "randomisation"):
            record["faithfulness"].pop(key, None)
        record["faithfulness"]["flips"].pop("second_attention", None)
    claim_tests([old], SOURCE_CLAIMS)
    assert outcomes(old) == ["not measured"] * 3
    assert control_blocks([old], lambda *_: "x") == []
    assert faithfulness_rows([old])[1][4:6] == ["-", "-"]
