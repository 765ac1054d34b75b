"""Which member is better than which across seeds, and what that says about the suite's claim.

A training run, one per seed, is the unit of replication (attnlab.compare.stats.across_seeds): each
pair of members on each metric is compared by the difference of their means over the seeds,
with a 95% confidence interval and a two-sided p that carry both the spread between seeds and
the noise of the test sentences (a paired bootstrap over sentences: BLEU and chrF from
sacreBLEU's sentence statistics, AER from its link counts). The p-values of every pair on every
metric of a report are adjusted together by Holm's method. A claim that A is better than B
holds when A's difference is significant in the claimed direction; a claim that A matches B
needs the suite's margin and holds when the 90% interval of A - B lies within it (two one-sided
tests); a claim that A is no worse than B (no loss, a gain allowed) needs a margin too and holds
when that interval of A's gain lies above minus the margin (one of the two). The suite's claim
holds when every named pair holds: an intersection of tests, which needs no correction for their
number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .across_seeds import (
    METHOD,
    SeedComparison,
    aer_scorer,
    compare_across_seeds,
    holm,
    mean_scorer,
)
from .claims import ALPHA, DIAGONAL, LOWER_IS_BETTER, RELATIONS, SUITE_RULE, Expectation

SAMPLES = 1000
# A claim on BLEU is not decided where a member scores below this: there most test sentences
# share no 4-gram with their reference, so BLEU's differences rest on a few matches, and a
# margin of 1 BLEU allows losing most of what a member translates (news-alignment's members
# read 1.04 and 2.30).
BLEU_FLOOR = 10.0
FLOOR_RULE = (f"A claim on BLEU is not decided where a member scores below BLEU {BLEU_FLOOR:g}: "
              f"it reads 'not decidable at this quality'.")

RULE = (f"Each pair of members is compared across seeds by {METHOD}: the difference of their "
        f"mean scores over the seeds, its 95% confidence interval and a two-sided p. A member "
        f"with fewer than three seeds decides nothing (its training variance is not measured). "
        f"The p-values of the "
        f"pairwise tables are Holm-adjusted together (every pair on every metric is one "
        f"family), and beside each unadjusted interval stands the simultaneous one over the "
        f"family (Bonferroni's, 1 - 0.05/m: it excludes 0 only where Holm rejects); better "
        f"means higher, except "
        f"for AER and perplexity, where it means lower.")
@dataclass
class PairTest:
    """One pair of members on one metric across seeds: the comparison, its direction (">": A
    better, "<": A worse, "=": no significant difference, "?": undecided), its Holm-adjusted p
    in its table, and the sentence the report prints."""

    a: str
    b: str
    metric: str
    comparison: SeedComparison
    label_a: str
    label_b: str
    p_adjusted: float | None = None
    method: str = METHOD
    family: int = 1   # the tests adjusted together with this one (Holm), for its interval

    @property
    def lower_is_better(self) -> bool:
        return LOWER_IS_BETTER.get(self.metric, False)

    @property
    def p(self) -> float | None:
        """The p that decides: the adjusted one in a table, else the pair's own."""
        return self.p_adjusted if self.p_adjusted is not None else self.comparison.p_value

    @property
    def direction(self) -> str:
        p = self.p
        if p is None:
            return "?"
        if p >= ALPHA:
            return "="
        ahead = self.comparison.difference < 0 if self.lower_is_better else \
            self.comparison.difference > 0
        return ">" if ahead else "<"

    @property
    def numbers(self) -> str:
        """"difference +3.21 (95% CI 1.02 to 5.40), p = 0.012 (Holm-adjusted), 3 and 3 seeds";
        undecided: the difference and why nothing is decided."""
        found = self.comparison
        seeds = f"{found.seeds_a} and {found.seeds_b} seeds"
        if not found.decided:
            return (f"undecided, difference {found.difference:+.4g} ({seeds}; "
                    f"{found.undecided_reason})")
        low, high = found.interval() or (found.difference, found.difference)
        adjusted = self.p_adjusted is not None
        joint = ""
        if adjusted and self.family > 1:
            # Bonferroni's interval: it holds for the whole family at 95%, as Holm's p does
            # (and never decides against it: Holm rejects whatever Bonferroni rejects)
            low_all, high_all = found.interval(1 - ALPHA / self.family) or (low, high)
            joint = (f"; simultaneous 95% CI over the {self.family} tests {low_all:.4g} to "
                     f"{high_all:.4g}")
        return (f"difference {found.difference:+.4g} ({'unadjusted ' if adjusted else ''}"
                f"95% CI {low:.4g} to {high:.4g}{joint}), {_p_text(self.p)}"
                f"{' (Holm-adjusted)' if adjusted else ''}, {seeds}"
                f"{'; ' + found.test_variance_note if found.test_variance_note else ''}")

    @property
    def sentence(self) -> str:
        """"Bahdanau better than no attention on BLEU: difference +3.21 (95% CI 1.02 to 5.40),
        p = 0.012 (Holm-adjusted), 3 and 3 seeds"."""
        if not self.comparison.decided:
            return f"{self.label_a} against {self.label_b} on {self.metric}: {self.numbers}"
        words = {">": "better than", "<": "worse than"}.get(self.direction)
        if words is None:
            return (f"no significant difference between {self.label_a} and {self.label_b} "
                    f"on {self.metric}: {self.numbers}")
        lower = ", lower is better" if self.lower_is_better else ""
        return f"{self.label_a} {words} {self.label_b} on {self.metric}{lower}: {self.numbers}"

    @property
    def finding(self) -> str:
        """What the test found, for a claim's line: "significantly better: difference ..."."""
        words = {">": "significantly better", "<": "significantly worse",
                 "=": "no significant difference"}.get(self.direction)
        lower = " (lower is better)" if self.lower_is_better and words else ""
        return f"{words}{lower}: {self.numbers}" if words else self.numbers

    def cell(self) -> str:
        """The table's cell: "better +3.21, p = 0.012", "= +0.2, p = 0.41", "? (< 3 seeds)"."""
        if self.direction == "?":
            return "? (< 3 seeds)"
        word = {">": "better", "<": "worse"}.get(self.direction, "=")
        return f"{word} {self.comparison.difference:+.3g}, {_p_text(self.p)}"


def _p_text(p: float | None) -> str:
    """"p = 0.012", "p < 0.001"; "p -" when undecided."""
    if p is None:
        return "p -"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def aer_gold(record: dict) -> str | None:
    """The gold set the claim's "aer" means: the dates gold when scored on it, else the first
    (RWTH); by its name, which the member's seeds share."""
    golds = [score["gold"] | {"name": score["name"]} for score in record.get("alignments") or []]
    return next((gold["name"] for gold in golds if gold["kind"] == "dates"),
                golds[0]["name"] if golds else None)


# The per-sentence statistics of a run's texts are costly (sacreBLEU's n-gram counts): a report
# asks for each pair's BLEU and chrF, and each member's are computed once.
_TEXT_STATS: dict[tuple, np.ndarray] = {}
CACHED = 256


def _text_metric(metric: str) -> Any:
    from sacrebleu.metrics import BLEU, CHRF

    return BLEU(effective_order=False) if metric == "bleu" else CHRF()


def text_stats(run: dict, metric: str) -> np.ndarray | None:
    """A run's sacreBLEU sentence statistics for BLEU or chrF: (n, k); None without texts."""
    if not run.get("hypotheses") or not run.get("references"):
        return None
    key = (tuple(run["hypotheses"]), tuple(run["references"]), metric)
    if key not in _TEXT_STATS:
        if len(_TEXT_STATS) >= CACHED:
            _TEXT_STATS.clear()
        found = _text_metric(metric)._extract_corpus_statistics(
            list(run["hypotheses"]), [list(run["references"])])
        _TEXT_STATS[key] = np.asarray(found, dtype=float)
    return _TEXT_STATS[key]


def text_scorer(metric: str):
    """Summed sentence statistics (..., k) -> sacreBLEU's corpus score of each (...)."""
    scorer = _text_metric(metric)

    def score(sums: np.ndarray) -> np.ndarray:
        flat = sums.reshape(-1, sums.shape[-1])
        scores = [scorer._compute_score_from_stats(list(row)).score for row in flat]
        return np.asarray(scores, dtype=float).reshape(sums.shape[:-1])

    return score


def _drop_statistics(a: dict, b: dict):
    """bleu_drop by sentence: each sentence's BLEU statistics in the shortest bucket's half or
    the longest's (zeros elsewhere), so the bootstrap over sentences carries the test set's
    noise into BLEU(shortest) - BLEU(longest); the buckets are those with_length_drop reads
    (at least MIN_BUCKET sentences). None when a run lacks its sentences' lengths."""
    from attnlab.eval.buckets import MIN_BUCKET

    runs = [*a["runs"], *b["runs"]]
    words = runs[0].get("source_words")
    buckets = [bucket for bucket in runs[0].get("buckets") or []
               if bucket.get("count", 0) >= MIN_BUCKET]
    if words is None or len(buckets) < 2 or any(run.get("source_words") != words
                                                for run in runs):
        return None
    lengths = np.asarray(words)
    inside = [(lengths >= bucket["lo"]) & (lengths < (bucket["hi"] if bucket["hi"] is not None
                                                      else np.inf))
              for bucket in (buckets[0], buckets[-1])]

    def split(run: dict) -> np.ndarray | None:
        stats = text_stats(run, "bleu")
        return None if stats is None else np.concatenate(
            [stats * inside[0][:, None], stats * inside[1][:, None]], axis=1)

    stats_a, stats_b = _stacked([split(run) for run in a["runs"]]), _stacked(
        [split(run) for run in b["runs"]])
    if stats_a is None or stats_b is None:
        return None
    bleu = text_scorer("bleu")
    k = stats_a.shape[-1] // 2
    return stats_a, stats_b, lambda sums: bleu(sums[..., :k]) - bleu(sums[..., k:])


def _counts(run: dict, gold: str, baseline: bool = False) -> np.ndarray | None:
    for alignment in run.get("alignments") or []:
        if alignment["name"] == gold:
            counts = alignment.get("baseline_counts" if baseline else "counts")
            return None if counts is None else np.asarray(counts, dtype=float)
    return None


def _stacked(found: list[np.ndarray | None]) -> np.ndarray | None:
    """The runs' statistics as (seeds, n, k), those without any left out; None when none is
    left or they are not of the same sentences."""
    arrays = [array for array in found if array is not None]
    if not arrays or len({array.shape for array in arrays}) > 1:
        return None
    return np.stack(arrays)


def _scores(record: dict, metric: str) -> np.ndarray | None:
    """A member's per-run scores as statistics of one "sentence" (seeds, 1, 2): a metric known
    only per run (perplexity, captioning scores) carries no sentence noise of its own."""
    values = [run["scores"].get(metric) for run in record["runs"]]
    values = [value for value in values if value is not None]
    if not values:
        return None
    return np.asarray([[[value, 1.0]] for value in values], dtype=float)


def _exact(run: dict) -> np.ndarray | None:
    """Each output's exact match as statistics (n, 2): (1 if it equals its reference, 1)."""
    if not run.get("hypotheses") or not run.get("references"):
        return None
    same = [float(h == r) for h, r in zip(run["hypotheses"], run["references"], strict=True)]
    return np.stack([np.asarray(same), np.ones(len(same))], axis=1)


def _percent(sums: np.ndarray) -> np.ndarray:
    return 100.0 * mean_scorer(sums)


def same_test_set(a: dict, b: dict) -> bool:
    """Whether two members were scored against the same references: a member trained the
    other way (a suite's reverse member) translates into another language, so neither its
    BLEU nor its AER (on the gold turned round) is compared with the others'."""
    return a["runs"][0].get("references") == b["runs"][0].get("references")


def statistics(a: dict, b: dict | None, metric: str):
    """(stats of A, stats of B, scorer) for one metric, or None when it cannot be compared. b
    None: A's AER against the diagonal aligner on the same sentences."""
    if b is not None and not same_test_set(a, b):
        return None
    if metric == "aer":
        gold = aer_gold(a)
        if gold is None:
            return None
        stats_a = _stacked([_counts(run, gold) for run in a["runs"]])
        runs_b = a["runs"] if b is None else b["runs"]
        stats_b = _stacked([_counts(run, gold, baseline=b is None) for run in runs_b])
        return None if stats_a is None or stats_b is None else (stats_a, stats_b, aer_scorer)
    if b is None:
        return None
    # A member whose runs kept their texts (a translation's) is tested on its sentences.
    texts = all(run.get("hypotheses") for run in [*a["runs"], *b["runs"]])
    if metric in ("bleu", "chrf") and texts:
        stats_a = _stacked([text_stats(run, metric) for run in a["runs"]])
        stats_b = _stacked([text_stats(run, metric) for run in b["runs"]])
        if stats_a is not None and stats_b is not None and stats_a.shape[1:] == stats_b.shape[1:]:
            return stats_a, stats_b, text_scorer(metric)
        return None
    if metric == "bleu_drop" and texts and (by_sentence := _drop_statistics(a, b)):
        return by_sentence   # else (a record without its sentences' lengths): seeds alone
    if metric == "exact_match" and texts:
        if not all("exact_match" in member.get("scores", {}) for member in (a, b)):
            return None  # not the runs' own metric (report.with_exact_match): nothing to test
        stats_a = _stacked([_exact(run) for run in a["runs"]])
        stats_b = _stacked([_exact(run) for run in b["runs"]])
        if stats_a is not None and stats_b is not None and stats_a.shape[1:] == stats_b.shape[1:]:
            return stats_a, stats_b, _percent
        return None
    stats_a, stats_b = _scores(a, metric), _scores(b, metric)
    return None if stats_a is None or stats_b is None else (stats_a, stats_b, mean_scorer)


def test_pair(a: dict, b: dict | None, metric: str, labels: dict[str, str]) -> PairTest | None:
    """A against B across seeds on metric (b None: against the diagonal aligner, "aer")."""
    found = statistics(a, b, metric)
    if found is None:
        return None
    name_b = b["name"] if b is not None else DIAGONAL
    comparison = compare_across_seeds(*found, samples=SAMPLES, seed=12345)
    return PairTest(a["name"], name_b, metric, comparison, labels.get(a["name"], a["label"]),
                    labels.get(name_b, name_b))


def matrix(tests: list[PairTest], records: list[dict], metric: str) -> list[list[str]]:
    """The pairwise results of one metric as a table: row A, column B, the cell "better +3.2,
    p = 0.012" (Holm-adjusted), "= ..." or "? (< 3 seeds)"."""
    found = {(test.a, test.b): test for test in tests if test.metric == metric}
    tested = {name for pair in found for name in pair}
    records = [record for record in records if record["name"] in tested]
    names = [record["name"] for record in records]
    rows = [[metric, *(record["label"] for record in records[1:])]]
    for i, a in enumerate(records[:-1]):
        row = [a["label"]]
        for j, b in enumerate(names[1:], start=1):
            test = found.get((a["name"], b)) if j > i else None
            row.append(test.cell() if test else "")
        rows.append(row)
    return rows


def pairwise(records: list[dict], metrics: tuple[str, ...]) -> list[PairTest]:
    """Every pair of members on each metric, their p-values adjusted together (Holm): a reader
    scanning every cell of every table makes one family of comparisons."""
    labels = {record["name"]: record["label"] for record in records}
    tests = [test for metric in metrics for i, a in enumerate(records) for b in records[i + 1:]
             if (test := test_pair(a, b, metric, labels)) is not None]
    for test, adjusted in zip(tests, holm([t.comparison.p_value for t in tests]), strict=True):
        test.p_adjusted = adjusted
        test.family = len(tests)
    return tests


@dataclass
class Verdict:
    outcome: str                 # "reproduced" | "not reproduced" | "inconclusive"
    lines: list[str]             # one per expected pair: what it predicts, what was found
    # whether the claims were fixed before the runs, and the first encoding's outcome if not
    registration: list[str] = field(default_factory=list)


def claim_verdict(expect: list[Expectation], records: list[dict]) -> Verdict | None:
    """A suite's claim against its `expect:` pairs."""
    if not expect:
        return None
    by_name = {record["name"]: record for record in records}
    labels = {record["name"]: record["label"] for record in records} | {
        DIAGONAL: "the diagonal aligner"}
    outcomes, lines = [], []
    for expectation in expect:
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
    low = [member for member in (a, b) if member is not None and expectation.metric == "bleu"
           and (member.get("scores") or {}).get("bleu", BLEU_FLOOR) < BLEU_FLOOR]
    if low:
        return "not decidable at this quality", "; ".join(
            f"{member['label']} reaches BLEU {member['scores']['bleu']:.2f}" for member in low
        ) + f", below the floor of {BLEU_FLOOR:g}"
    test = test_pair(a, b, expectation.metric, labels)
    if test is None:
        return "inconclusive", f"no {expectation.metric} to compare"
    return RELATIONS[expectation.relation].decide(test, expectation)


def rules() -> list[str]:
    """The pairwise tables' rule, then the claims' (one paragraph: each kind's, the suite's)."""
    return [RULE, " ".join([*(kind.rule for kind in RELATIONS.values()), FLOOR_RULE,
                            SUITE_RULE])]
