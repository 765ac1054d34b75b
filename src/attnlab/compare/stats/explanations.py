"""The numbers of "is attention an alignment, is it an explanation?", member by member and across
seeds, from the runs' explanation records (attnlab.compare.run.explain_records); the report's
pages print them (attnlab.compare.report.explanations).

- Claims of the survey's picture (Lilian Weng, "Attention? Attention!", 2018: draw the weights
  and you see which input each output came from), one entry each in EXPLANATION_CLAIMS, each
  tested per member across seeds by the test of across_seeds, Holm-adjusted over the members
  of that claim: attention is an alignment (its argmax links have a lower AER than the diagonal
  aligner on the same gold pairs); attention agrees with gradient attribution (Kendall's tau
  between a step's attention and |gradient x input| is above 0 on average); the most attended
  position matters more than a random one (zeroing its weight changes the chosen token more
  often: Serrano & Smith 2019); and, against controls that read the same runs (so tested paired
  by run): more than the second most attended position, a control of comparable weight; and
  attention's ranking is more comprehensive and more sufficient than a random ranking (ERASER,
  DeYoung et al. 2020).
- Every reading of links the records hold (attnlab.translation.alignment.readings), tested
  against the diagonal aligner and against the member's own argmax attention, paired by run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .across_seeds import (
    METHOD,
    PAIRED_METHOD,
    SeedComparison,
    aer_scorer,
    compare_across_seeds,
    compare_paired_across_seeds,
    holm,
)
from .verdicts import SAMPLES, PairTest, statistics

SEED = 12345   # the bootstrap's, so that a report regenerates identically


@dataclass
class Explained:
    """One member's explanation records (one per explained seed) and its compare records."""

    name: str
    label: str
    records: list[dict]
    runs: list[dict]
    tests: dict[str, PairTest] = field(default_factory=dict)   # claim -> its test
    # (reading, reference) -> its test against the diagonal or attention (reading_tests)
    readings: dict[tuple[str, str], PairTest] | None = None


def _stack(arrays: list[np.ndarray]) -> np.ndarray | None:
    """(seeds, n, k), or None when the seeds' sentences differ in number."""
    if not arrays or len({array.shape for array in arrays}) > 1:
        return None
    return np.stack(arrays)


def extraction_stats(member: Explained, name: str) -> np.ndarray | None:
    """Per seed, the per-pair AER counts of one reading: (seeds, pairs, 4)."""
    found = [record.get("extractions", {}).get("counts", {}).get(name)
             for record in member.records]
    if any(counts is None for counts in found):
        return None
    return _stack([np.asarray(counts, dtype=float).reshape(-1, 4) for counts in found])


def _figures(member: Explained, group: str, name: str) -> list[list] | None:
    """Per seed, the per-sentence figures record["faithfulness"][group][name]; None where a
    record lacks them (made before the test existed, or not asked for)."""
    found = [record["faithfulness"].get(group, {}).get(name) for record in member.records]
    return None if any(figures is None for figures in found) else found


def flip_stats(member: Explained, which: str) -> np.ndarray | None:
    """Per seed, per sentence, (steps that flipped, steps tested): (seeds, sentences, 2)."""
    return step_stats(member, "flips", which, per_step=False)


def step_stats(member: Explained, group: str, name: str, *,
               per_step: bool = True) -> np.ndarray | None:
    """Per seed, per sentence, (figure x steps, steps) of a figure kept as a mean over the
    sentence's tested steps (per_step: ERASER's), or as a sum over them (the erasure flips and
    the weight erased), so that mean_or_zero gives the mean per step: (seeds, sentences, 2)."""
    figures = _figures(member, group, name)
    if figures is None:
        return None
    rows = []
    for found, record in zip(figures, member.records, strict=True):
        steps = np.asarray(record["faithfulness"]["steps"], dtype=float)
        values = np.asarray([0.0 if x is None else x for x in found], dtype=float)
        rows.append(np.stack([values * steps if per_step else values, steps], axis=1))
    return _stack(rows)


def sentence_stats(member: Explained, group: str, name: str) -> np.ndarray | None:
    """Per seed, per sentence, (figure, 1), or (0, 0) for a sentence without one: a figure
    weighted by sentence (Kendall's tau of agreement and of the randomisation check)."""
    figures = _figures(member, group, name)
    if figures is None:
        return None
    return _stack([np.asarray([[0.0, 0.0] if x is None else [x, 1.0] for x in found])
                   for found in figures])


def agreement_stats(member: Explained, method: str) -> np.ndarray | None:
    """Per seed, per sentence, (tau, 1), or (0, 0) for a sentence without one."""
    return sentence_stats(member, "agreement", method)


def perplexity_stats(member: Explained, which: str) -> np.ndarray | None:
    """Per seed, per test sentence, (nll, tokens) read with `which` attention ("own",
    "uniform"): (seeds, sentences, 2)."""
    return _stack([np.asarray(record["perplexity"][which], dtype=float).reshape(-1, 2)
                   for record in member.records])


def permutation_stats(member: Explained) -> np.ndarray | None:
    """Per seed, per sentence, (mean median TVD, 1), or (0, 0) for a sentence without one."""
    return _stack([np.asarray([[0.0, 0.0] if tvd is None else [tvd, 1.0]
                               for tvd in record["faithfulness"]["permutation_tvd"]])
                   for record in member.records])


def mean_or_zero(sums: np.ndarray) -> np.ndarray:
    return np.divide(sums[..., 0], sums[..., 1], out=np.zeros(sums.shape[:-1]),
                     where=sums[..., 1] > 0)


def rate(sums: np.ndarray) -> np.ndarray:
    return 100.0 * mean_or_zero(sums)


def perplexity(sums: np.ndarray) -> np.ndarray:
    return np.exp(sums[..., 0] / sums[..., 1])


Scorer = Callable[[np.ndarray], np.ndarray]
Sides = tuple[np.ndarray, np.ndarray, Scorer]


@dataclass(frozen=True)
class ExplanationClaim:
    """text: the claim as stated; short: its column; metric and against: what is compared;
    sides(member) -> (A's statistics, the reference's, their scorer), None when not measured;
    difference: what the report's cell gives, A minus the reference; paired: both sides read
    the same runs, so the test is paired by run (compare_paired_across_seeds)."""

    text: str
    short: str
    metric: str
    against: str
    sides: Callable[[Explained], Sides | None]
    difference: str
    paired: bool = False


def _alignment(member: Explained) -> Sides | None:
    attention = extraction_stats(member, "attention")
    diagonal = extraction_stats(member, "diagonal")
    return None if attention is None or diagonal is None else (attention, diagonal, aer_scorer)


def _agreement(member: Explained) -> Sides | None:
    taus = agreement_stats(member, "gradient")
    return None if taus is None else (taus, np.zeros_like(taus) + [0.0, 1.0], mean_or_zero)


def _beside(a: np.ndarray | None, b: np.ndarray | None, scorer: Scorer) -> Sides | None:
    return None if a is None or b is None else (a, b, scorer)


def _erasure(control: str) -> Callable[[Explained], Sides | None]:
    """The top attended position's flips against those of `control` (an entry of ERASED)."""
    return lambda member: _beside(flip_stats(member, "top_attention"),
                                  flip_stats(member, control), rate)


def _comprehensiveness(member: Explained) -> Sides | None:
    return _beside(step_stats(member, "comprehensiveness", "attention"),
                   step_stats(member, "comprehensiveness", "random"), mean_or_zero)


def _sufficiency(member: Explained) -> Sides | None:
    # lower is more sufficient: the random ranking's minus attention's, above 0 where it holds
    return _beside(step_stats(member, "sufficiency", "random"),
                   step_stats(member, "sufficiency", "attention"), mean_or_zero)


TOP_MINUS = "the top attended position's flip rate minus {}'s, in points"

EXPLANATION_CLAIMS: dict[str, ExplanationClaim] = {
    "alignment": ExplanationClaim(
        "attention is an alignment (AER below the diagonal aligner's)",
        "attention is an alignment", "aer", "the diagonal aligner", _alignment,
        "attention's AER minus the diagonal's"),
    "agreement": ExplanationClaim(
        "attention agrees with gradient attribution (Kendall's tau above 0)",
        "agrees with gradient x input", "Kendall's tau", "no agreement (tau 0)", _agreement,
        "tau minus 0"),
    "erasure": ExplanationClaim(
        "the most attended position matters more than a random one (erasure flips)",
        "top attended matters more than random", "erasure flip rate",
        "a random other position", _erasure("random"), TOP_MINUS.format("a random one")),
    "erasure, earlier word": ExplanationClaim(
        "the most attended earlier word matters more than a random one (erasure flips)",
        "top attended earlier word matters more than random", "erasure flip rate",
        "a random other position", _erasure("random"),
        TOP_MINUS.format("a random earlier word")),
    "erasure, second": ExplanationClaim(
        "the most attended position matters more than the second most attended (erasure "
        "flips)", "top attended matters more than second", "erasure flip rate",
        "the second most attended position", _erasure("second_attention"),
        TOP_MINUS.format("the second most attended"), paired=True),
    "erasure, second earlier word": ExplanationClaim(
        "the most attended earlier word matters more than the second most attended (erasure "
        "flips)", "top attended earlier word matters more than second", "erasure flip rate",
        "the second most attended position", _erasure("second_attention"),
        TOP_MINUS.format("the second most attended"), paired=True),
    "comprehensiveness": ExplanationClaim(
        "taking attention's top positions away costs more than a random ranking's (ERASER "
        "comprehensiveness)", "more comprehensive than random", "comprehensiveness",
        "a random ranking", _comprehensiveness,
        "attention's comprehensiveness minus a random ranking's", paired=True),
    "sufficiency": ExplanationClaim(
        "attention's top positions alone keep more of the output than a random ranking's "
        "(ERASER sufficiency)", "more sufficient than random", "sufficiency, random minus own",
        "a random ranking", _sufficiency,
        "a random ranking's sufficiency minus attention's", paired=True),
}
def claim_tests(members: list[Explained], claims: tuple[str, ...]) -> None:
    """Each member's tests of `claims` (keys of EXPLANATION_CLAIMS) in member.tests,
    Holm-adjusted per claim over the members; and every reading's tests (member.readings), so
    that both pages print the same statistics, computed once."""
    reading_tests(members)
    for key in claims:
        claim, tests = EXPLANATION_CLAIMS[key], []
        for member in members:
            sides = claim.sides(member)
            if sides is None:
                continue
            across = compare_paired_across_seeds if claim.paired else compare_across_seeds
            comparison = across(*sides, samples=SAMPLES, seed=SEED)
            member.tests[key] = PairTest(member.name, claim.against, claim.metric, comparison,
                                         member.label, claim.against,
                                         method=PAIRED_METHOD if claim.paired else METHOD)
            tests.append(member.tests[key])
        for test, adjusted in zip(tests, holm([t.comparison.p_value for t in tests]),
                                  strict=True):
            test.p_adjusted, test.family = adjusted, len(tests)


def reading_names(members: list[Explained]) -> list[str]:
    """The readings the records hold, in the records' order (the registry's), less the
    diagonal aligner, the reference every reading is held to, and less a Transformer's layer
    readings (extractions["layers"]), which have their own table (stats.layers)."""
    names: dict[str, None] = {}
    layered: set[str] = set()
    for member in members:
        for record in member.records:
            extractions = record.get("extractions", {})
            names.update(dict.fromkeys(extractions.get("counts", {})))
            layered.update(extractions.get("layers") or {})
    return [name for name in names if name != "diagonal" and name not in layered]


# Every reading of links against two references, across seeds: the diagonal aligner (does it
# beat no model at all?) and the member's own argmax attention (does reading it another way
# help?). Both sides of a test are readings of the same runs on the same pairs, so the test is
# paired by run: what a run's training luck does to both readings cancels.
AGAINST = ("diagonal", "attention")


def reading_tests(members: list[Explained]) -> dict[tuple[str, str, str], PairTest]:
    """(member, reading, reference) -> the test of the reading's AER minus the reference's,
    across seeds; p Holm-adjusted over every test against the same reference. Each member
    keeps its own (member.readings)."""
    found: dict[tuple[str, str, str], PairTest] = {}
    own: dict[str, dict[tuple[str, str], PairTest]] = {member.name: {} for member in members}
    names = reading_names(members)
    for reference in AGAINST:
        family = []
        for member in members:
            base = extraction_stats(member, reference)
            for name in names:
                stats = extraction_stats(member, name)
                if (base is None or stats is None or name == reference
                        or stats.shape != base.shape):   # not the same runs and pairs
                    continue
                label = "the diagonal aligner" if reference == "diagonal" else "attention"
                comparison = compare_paired_across_seeds(stats, base, aer_scorer,
                                                         samples=SAMPLES, seed=SEED)
                test = PairTest(member.name, label, "aer", comparison, member.label, label,
                                method=PAIRED_METHOD)
                found[(member.name, name, reference)] = test
                own[member.name][(name, reference)] = test
                family.append(test)
        for test, adjusted in zip(family, holm([t.comparison.p_value for t in family]),
                                  strict=True):
            test.p_adjusted, test.family = adjusted, len(family)
    for member in members:
        member.readings = own[member.name]
    return found


def uniform_loss(member: Explained) -> SeedComparison | None:
    """The member's own BLEU minus uniform attention's across seeds, paired by run (each run
    decoded both ways)."""
    own = {"name": member.name, "runs": member.runs}
    flat = {"name": "uniform", "runs": [record["uniform"] for record in member.records]}
    found = statistics(own, flat, "bleu")
    if found is None or found[0].shape != found[1].shape:
        return None
    return compare_paired_across_seeds(*found, samples=SAMPLES, seed=SEED)


def against_zero(stats: np.ndarray, scorer: Scorer) -> SeedComparison:
    """A figure's mean over the seeds with its interval: the test against a zero figure on the
    same sentences (the seeds' spread and the sentences' noise)."""
    zero = stats.copy()
    zero[..., 0] = 0.0
    return compare_across_seeds(stats, zero, scorer, samples=SAMPLES, seed=SEED)


def uniform_minus_own_perplexity(member: Explained) -> SeedComparison | None:
    """Perplexity with uniform attention minus the model's own, paired by run."""
    own, flat = perplexity_stats(member, "own"), perplexity_stats(member, "uniform")
    if own is None or flat is None or own.shape != flat.shape:
        return None
    return compare_paired_across_seeds(flat, own, perplexity, samples=SAMPLES, seed=SEED)
