"""Which member is better than which, seed by seed, and what that says about the suite's claim.

Translation members are tested pair by pair with sacreBLEU's paired bootstrap resampling (BLEU
and chrF on the test set; approximate randomisation beside it for the pairs the claim names)
and AER with a paired bootstrap over sentences, each seed k of one member against seed k of the
other. A score with no sentence-level test (perplexity, captioning's BLEU-4 and localisation)
is compared over the seeds alone. The suite's claim (its `expect:` pairs) then gets a verdict
by the rule in VERDICT_RULE; every sentence is computed, none written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .significance import (
    RULE,
    PairResult,
    aer_pair_test,
    finding_sentence,
    seed_split,
    seed_verdict,
    text_pair_test,
)
from .suite import DIAGONAL, LOWER_IS_BETTER, Expectation, Suite

ALPHA = 0.05
SAMPLES = 1000
VERDICT_RULE = (
    "A claimed 'A better than B' is reproduced when A > B by that rule, not reproduced when "
    "A < B, and inconclusive otherwise; a claimed 'A as good as B' is reproduced unless B is "
    "significantly better (then not reproduced). The suite's claim is reproduced when every "
    "pair it names is, not reproduced when any is not, and inconclusive otherwise.")
SEED_LEVEL = ("Where no sentence-level test exists (perplexity, captioning scores), A > B "
              "needs A ahead in every seed, with at least 3 seeds.")


@dataclass
class PairTest:
    """One pair of members on one metric: the per-seed results and the majority verdict."""

    a: str
    b: str
    metric: str
    direction: str          # ">", "<" or "="
    agreeing: int           # seeds behind the direction
    seeds: int
    sentence: str
    results: list[PairResult] = field(default_factory=list)
    method: str = "paired bootstrap (sacreBLEU)"


def aer_gold(record: dict) -> str | None:
    """The gold set the claim's "aer" means: the dates gold when scored on it, else RWTH."""
    names = [gold["name"] for gold in record.get("alignments") or []]
    return next((name for name in names if "dates" in name), names[0] if names else None)


def _paired_runs(a: dict, b: dict) -> list[tuple[dict, dict]]:
    by_seed = {run.get("seed", 1): run for run in b["runs"]}
    return [(run, by_seed[run.get("seed", 1)]) for run in a["runs"]
            if run.get("seed", 1) in by_seed]


# The outputs compared and the method -> sacreBLEU's results: a report asks for a pair's BLEU,
# its chrF and the claim's verdict, in the HTML and in results.md, and one test gives them all.
_TEXT_TESTS: dict[tuple, dict[str, PairResult]] = {}
CACHED = 512


def text_tests(a: dict, b: dict, method: str = "bs") -> dict[str, list[PairResult]]:
    """BLEU and chrF, seed by seed, of two translation members."""
    results: dict[str, list[PairResult]] = {"bleu": [], "chrf": []}
    for run_a, run_b in _paired_runs(a, b):
        if not run_a.get("hypotheses") or not run_b.get("hypotheses"):
            continue
        key = (tuple(run_a["hypotheses"]), tuple(run_b["hypotheses"]),
               tuple(run_a["references"]), method)
        if key not in _TEXT_TESTS:
            if len(_TEXT_TESTS) >= CACHED:
                _TEXT_TESTS.clear()
            _TEXT_TESTS[key] = text_pair_test(run_a["hypotheses"], run_b["hypotheses"],
                                              [run_a["references"]], method=method,
                                              samples=SAMPLES, seed=12345)
        for metric in results:
            results[metric].append(_TEXT_TESTS[key][metric])
    return results


def _counts(run: dict, gold: str, baseline: bool = False):
    import numpy as np

    for alignment in run.get("alignments") or []:
        if alignment["name"] == gold:
            counts = alignment.get("baseline_counts" if baseline else "counts")
            return None if counts is None else np.asarray(counts, dtype=np.int64)
    return None


def aer_tests(a: dict, b: dict | None) -> list[PairResult]:
    """AER of member a against member b (or, b None, against the diagonal aligner on the same
    sentences), seed by seed."""
    gold = aer_gold(a)
    results = []
    pairs = _paired_runs(a, b) if b is not None else [(run, run) for run in a["runs"]]
    for run_a, run_b in pairs:
        if gold is None:
            break
        counts_a, counts_b = _counts(run_a, gold), _counts(run_b, gold, baseline=b is None)
        if counts_a is not None and counts_b is not None and len(counts_a) == len(counts_b):
            results.append(aer_pair_test(counts_a, counts_b, samples=SAMPLES, seed=12345))
    return results


def seed_level(a: dict, b: dict, metric: str) -> tuple[str, int, int]:
    """A > B only when A is ahead in every seed (at least 3 seeds)."""
    lower = LOWER_IS_BETTER.get(metric, False)
    pairs = [(run_a["scores"].get(metric), run_b["scores"].get(metric))
             for run_a, run_b in _paired_runs(a, b)]
    pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
    ahead = sum((x < y) if lower else (x > y) for x, y in pairs)
    behind = sum((x > y) if lower else (x < y) for x, y in pairs)
    if len(pairs) >= 3 and ahead == len(pairs):
        return ">", ahead, len(pairs)
    if len(pairs) >= 3 and behind == len(pairs):
        return "<", behind, len(pairs)
    return "=", len(pairs) - max(ahead, behind), len(pairs)


def test_pair(a: dict, b: dict | None, metric: str, labels: dict[str, str],
              method: str = "bs") -> PairTest | None:
    """A against B on metric (b None: against the diagonal aligner, metric "aer")."""
    name_b = b["name"] if b is not None else DIAGONAL
    label_b = labels.get(name_b, name_b)
    lower = LOWER_IS_BETTER.get(metric, False)
    if metric == "aer":
        results = aer_tests(a, b)
        how = "paired bootstrap over sentences"
    elif metric in ("bleu", "chrf") and a["task"] == "translation":
        results = text_tests(a, b, method)[metric] if b is not None else []
        how = ("paired bootstrap (sacreBLEU)" if method == "bs" else
               "approximate randomisation (sacreBLEU)")
    else:
        if b is None:
            return None
        verdict = seed_level(a, b, metric)
        relation = {">": "ahead of", "<": "behind"}.get(verdict[0], "not consistently apart from")
        sentence = (f"{a['label']} {relation} {label_b} on {metric} in {verdict[1]} of "
                    f"{verdict[2]} seeds")  # the verdict line adds the method
        return PairTest(a["name"], name_b, metric, verdict[0], verdict[1], verdict[2], sentence,
                        method="seed level")
    if not results:
        return None
    verdict = seed_verdict(results, ALPHA, lower_is_better=lower)
    split = seed_split(results, ALPHA, lower_is_better=lower)
    return PairTest(a["name"], name_b, metric, *verdict,
                    finding_sentence(a["label"], label_b, metric, verdict, ALPHA, split),
                    results, how)


def matrix(tests: list[PairTest], records: list[dict], metric: str) -> list[list[str]]:
    """The pairwise results of one metric as a table: row A, column B, the cell "> 3/3" (A
    better in 3 of 3 seeds), "< 2/3" or "= 3/3" (no significant difference)."""
    names = [record["name"] for record in records]
    found = {(test.a, test.b): test for test in tests if test.metric == metric}
    rows = [[metric, *(record["label"] for record in records[1:])]]
    for i, a in enumerate(records[:-1]):
        row = [a["label"]]
        for j, b in enumerate(names[1:], start=1):
            test = found.get((a["name"], b)) if j > i else None
            row.append(f"{test.direction} {test.agreeing}/{test.seeds}" if test else "")
        rows.append(row)
    return rows


def pairwise(records: list[dict], metrics: tuple[str, ...]) -> list[PairTest]:
    """Every pair of members on each metric."""
    labels = {record["name"]: record["label"] for record in records}
    tests = []
    for i, a in enumerate(records):
        for b in records[i + 1:]:
            for metric in metrics:
                test = test_pair(a, b, metric, labels)
                if test is not None:
                    tests.append(test)
    return tests


@dataclass
class Verdict:
    outcome: str                 # "reproduced" | "not reproduced" | "inconclusive"
    lines: list[str]             # one per expected pair: what it predicts, what was found


def claim_verdict(suite: Suite, records: list[dict]) -> Verdict | None:
    """The suite's claim against its `expect:` pairs."""
    if not suite.expect:
        return None
    by_name = {record["name"]: record for record in records}
    labels = {record["name"]: record["label"] for record in records} | {
        DIAGONAL: "the diagonal aligner"}
    outcomes, lines = [], []
    for expectation in suite.expect:
        outcome, found = _expected(expectation, by_name, labels)
        outcomes.append(outcome)
        lines.append(f"{expectation.describe(labels)}: {outcome} ({found}).")
    overall = ("not reproduced" if "not reproduced" in outcomes else
               "reproduced" if all(o == "reproduced" for o in outcomes) else "inconclusive")
    return Verdict(overall, lines)


def _expected(expectation: Expectation, by_name: dict[str, dict], labels: dict[str, str]
              ) -> tuple[str, str]:
    a = by_name.get(expectation.a)
    b = by_name.get(expectation.b) if expectation.b != DIAGONAL else None
    if a is None or (b is None and expectation.b != DIAGONAL):
        return "inconclusive", "a member has not finished"
    method = "ar" if expectation.metric in ("bleu", "chrf") else "bs"
    tests = [test for test in (test_pair(a, b, expectation.metric, labels),
                               test_pair(a, b, expectation.metric, labels, method))
             if test is not None]
    if not tests:
        return "inconclusive", f"no {expectation.metric} to compare"
    directions = {test.direction for test in tests}
    found = "; ".join(dict.fromkeys(f"{test.sentence}, {test.method}" for test in tests))
    if len(directions) > 1:
        return "inconclusive", found   # the two tests disagree
    direction = directions.pop()
    if expectation.relation == "better":
        return {">": "reproduced", "<": "not reproduced"}.get(direction, "inconclusive"), found
    return ("not reproduced" if direction == "<" else "reproduced"), found


def rules() -> list[str]:
    return [RULE, SEED_LEVEL, VERDICT_RULE]
