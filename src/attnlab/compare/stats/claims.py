"""The kinds of claim a suite's `expect:` list can make, one entry each in RELATIONS: the YAML
keys that name its two sides, whether it needs a margin, its words, its rule and its decision
from the test across seeds of A against B (verdicts.PairTest).

    expect:
      - {better: bahdanau, than: no-attention, metric: bleu}
      - {matches: luong-dot, as: bahdanau, metric: bleu, margin: 1.0}
      - {no_worse: guided, than: bahdanau, metric: bleu, margin: 1.0}

Adding a kind of claim is one entry here (and its docs and tests): the suite's parser, the
verdict and the report's rule all read RELATIONS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .across_seeds import SeedComparison

ALPHA = 0.05
# A no-loss claim is one-sided: tested at 0.025, as non-inferiority trials are (ICH E9), so that
# it asks as much of the evidence as a two-sided test at ALPHA does of either direction.
NONINFERIORITY_ALPHA = 0.025
DIAGONAL = "diagonal"   # `than: diagonal`: the trivial aligner, for a claim on AER
# The scores of which lower is better (an `expect:` metric is a score key, or "aer").
# bleu_drop: BLEU of the shortest length bucket minus the longest's (a smaller fall is better).
LOWER_IS_BETTER = {"aer": True, "perplexity": True, "bleu_drop": True}


class Tested(Protocol):
    """What a relation decides on: verdicts.PairTest."""

    @property
    def direction(self) -> str: ...
    @property
    def finding(self) -> str: ...
    @property
    def comparison(self) -> SeedComparison: ...


@dataclass(frozen=True)
class Expectation:
    """One pair the claim predicts: `a` in `relation` to `b` on `metric` (RELATIONS)."""

    relation: str
    a: str
    b: str
    metric: str
    margin: float | None = None  # how far apart still counts, where the relation takes one

    def describe(self, labels: dict[str, str]) -> str:
        kind = RELATIONS[self.relation]
        within = "" if self.margin is None else kind.margin_words.format(margin=self.margin)
        return (f"{labels.get(self.a, self.a)} {kind.verb} {labels.get(self.b, self.b)} on "
                f"{self.metric}{within}")


# decide(test, expectation) -> (outcome, what was found)
Decide = Callable[[Tested, Expectation], tuple[str, str]]


@dataclass(frozen=True)
class Relation:
    """other: the YAML key naming B; margin: "none", "optional" (without one nothing is
    decided) or "required"; verb: in "A <verb> B"; margin_words: after it, formatted with the
    margin; rule: the sentence the report prints; decide: the verdict."""

    other: str
    margin: str
    verb: str
    margin_words: str
    rule: str
    decide: Decide

    def keys(self, name: str) -> list[set[str]]:
        """The key sets a YAML entry of this kind may have."""
        plain = {name, self.other, "metric"}
        return {"none": [plain], "optional": [plain, plain | {"margin"}],
                "required": [plain | {"margin"}]}[self.margin]

    def example(self, name: str) -> str:
        margin = ", margin: D" if self.margin != "none" else ""
        return f"{{{name}: A, {self.other}: B, metric: M{margin}}}"


OUTCOMES = {"better": "reproduced", "worse": "not reproduced", "no worse": "reproduced",
            "equivalent": "reproduced", "different": "not reproduced"}


def better(test: Tested, _: Expectation) -> tuple[str, str]:
    outcome = {">": "reproduced", "<": "not reproduced"}.get(test.direction, "inconclusive")
    return outcome, test.finding


def matches(test: Tested, claim: Expectation) -> tuple[str, str]:
    if claim.margin is None:
        return "inconclusive", (f"{test.finding}; the claim names no margin, and without one "
                                f"'as good as' cannot be tested")
    found = test.comparison.equivalence(claim.margin, ALPHA)
    outcome, text = _with_interval(test, found, "90% CI", f" against the margin ±{claim.margin:g}",
                                   1 - 2 * ALPHA)
    # TOST at ALPHA per side, 80% power at no true difference: both sides' beta 0.1
    return _powered(outcome, text, test, claim.margin, 2 * ALPHA, power=0.9)


def no_worse(test: Tested, claim: Expectation) -> tuple[str, str]:
    assert claim.margin is not None  # the parser requires it
    lower_is_better = claim.metric in LOWER_IS_BETTER
    found = test.comparison.noninferiority(claim.margin, NONINFERIORITY_ALPHA, lower_is_better)
    against = f", a loss being {'B - A' if lower_is_better else 'A - B'} below -{claim.margin:g}"
    outcome, text = _with_interval(test, found, "95% CI of A - B", against,
                                   1 - 2 * NONINFERIORITY_ALPHA)
    return _powered(outcome, text, test, claim.margin, 2 * NONINFERIORITY_ALPHA, power=0.8)


def _powered(outcome: str, text: str, test: Tested, margin: float, alpha: float,
             power: float) -> tuple[str, str]:
    """An inconclusive margin claim that its seeds could not have decided says so: with 80%
    power at no true difference, at the seeds' observed spread, how many seeds per member a
    test at this margin needs (across_seeds.SeedComparison.seeds_needed)."""
    if outcome != "inconclusive":
        return outcome, text
    comparison = test.comparison
    seeds = min(comparison.seeds_a, comparison.seeds_b)
    if not comparison.decided:
        return f"undecidable at {seeds} seeds (needs at least 3)", text
    needed = comparison.seeds_needed(margin, alpha=alpha, power=power)
    if needed is None:
        return ("undecidable at any number of seeds on this test set (its sentence noise "
                "alone is too large for the margin)", text)
    if needed > seeds:
        return f"undecidable at {seeds} seeds (needs about {needed})", text
    return outcome, text


def _with_interval(test: Tested, found: str, named: str, against: str,
                   level: float) -> tuple[str, str]:
    interval = test.comparison.interval(level)
    within = ("" if interval is None else
              f"; {named} {interval[0]:.4g} to {interval[1]:.4g}{against}")
    return OUTCOMES.get(found, "inconclusive"), f"{test.finding}{within}"


RELATIONS: dict[str, Relation] = {
    "better": Relation(
        "than", "none", "better than", "",
        "A claimed 'A better than B' is reproduced when A is significantly better (p < 0.05), "
        "not reproduced when significantly worse, and inconclusive otherwise.", better),
    "matches": Relation(
        "as", "optional", "as good as", " (within ±{margin:g})",
        "A claimed 'A as good as B' needs a margin and is reproduced when the 90% interval of "
        "A - B lies within it (two one-sided tests), not reproduced when it lies wholly beyond "
        "it, inconclusive otherwise, and never reproduced by the absence of a significant "
        "difference; inconclusive where its seeds could not have decided it (under 80% power "
        "at no true difference, at the seeds' spread) reads 'undecidable at N seeds (needs "
        "about M)'.", matches),
    "no_worse": Relation(
        "than", "required", "no worse than", " (by more than {margin:g})",
        "A claimed 'A no worse than B' (no loss) needs a margin too and is reproduced when the "
        "95% interval of A's gain over B lies above minus the margin (a one-sided test at 0.025, "
        "as non-inferiority trials are: A may be better by any amount), not reproduced when the "
        "97.5% interval lies wholly below it, inconclusive otherwise (or undecidable, as for "
        "'as good as').",
        no_worse),
}

SUITE_RULE = ("The suite's claim is reproduced when every pair it names is (each at 0.05: all "
              "must hold, so no correction is needed), not reproduced when any is not, and "
              "inconclusive otherwise.")


def entry_forms() -> str:
    """"{better: A, than: B, metric: M}, ... or {no_worse: ...}" for a message."""
    forms = [relation.example(name) for name, relation in RELATIONS.items()]
    return ", ".join(forms[:-1]) + " or " + forms[-1]
