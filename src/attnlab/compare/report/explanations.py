"""The report's answer to "is attention an alignment, is it an explanation?", member by member
and across seeds, from the runs' explanation records (attnlab.compare.run.explain_records).

Three claims of the survey's picture (Lilian Weng, "Attention? Attention!", 2018: draw the
weights and you see which input each output came from), each tested per member across seeds by
the test of attnlab.compare.stats.across_seeds, Holm-adjusted over the members of that claim:

- attention is an alignment: its argmax links have a lower AER than the diagonal aligner on
  the same gold pairs;
- attention agrees with gradient attribution: Kendall's tau between a step's attention and the
  magnitude of gradient x input over the source is above 0 on average;
- the most attended position matters more than a random one: zeroing its weight (and
  renormalising) changes the chosen token more often than zeroing a random other position's
  (Serrano & Smith 2019).

Beside them, as figures with their spread: every extraction's AER (attention, a threshold on
it, each attribution's argmax, the rows one step shifted, a reverse model's and both directions
joined), each tested across seeds against the diagonal's and against the member's own
attention (Holm-adjusted per reference), the eflomal aligner's, the
permutation and adversarial tests (Jain & Wallace 2019) and the quality lost with uniform
attention (Wiegreffe & Pinter 2019).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnlab.explain.methods import JOINED, LABELS, REVERSE
from attnlab.viz.report import html_table

from ..run.explain_records import asked, explained_seeds, read_explanation
from ..run.layout import RunOptions, read_record, seed_dir
from ..stats.across_seeds import (
    PAIRED_METHOD,
    SeedComparison,
    aer_scorer,
    compare_across_seeds,
    compare_paired_across_seeds,
    holm,
)
from ..stats.seeds import spread
from ..stats.verdicts import SAMPLES, PairTest, statistics
from ..suite.definition import Suite
from .tables import markdown_table

EXTRACTIONS = ("attention", "attention >= 0.3", "gradient", "integrated_gradients", "erasure",
               REVERSE, *JOINED)
CLAIMS = ("attention is an alignment (AER below the diagonal aligner's)",
          "attention agrees with gradient attribution (Kendall's tau above 0)",
          "the most attended position matters more than a random one (erasure flips)")
RULE = ("Each claim is tested per member across its seeds (Welch's t over the seeds' scores "
        "with the test set's sentence noise added, as the pairwise tables), its p Holm-adjusted "
        "over the members tested for that claim: reproduced when significantly so (p < 0.05), "
        "not reproduced when significantly the other way, inconclusive otherwise.")


@dataclass
class Explained:
    """One member's explanation records (one per explained seed) and its compare records."""

    name: str
    label: str
    records: list[dict]
    runs: list[dict]
    tests: dict[str, PairTest] = field(default_factory=dict)   # claim -> its test
    # (extraction, reference) -> its test against the diagonal or attention (extraction_tests)
    readings: dict[tuple[str, str], PairTest] | None = None


def gather_explained(suite: Suite, directory: Path, options: RunOptions) -> list[Explained]:
    """The members with attention and at least one explanation record, in suite order."""
    found = []
    for member in suite.members:
        pairs = [(record, run) for seed in explained_seeds(suite, options)
                 if (record := read_explanation(seed_dir(directory, member.name, seed),
                                                asked(suite, directory, member, seed)))
                 is not None and (run := read_record(seed_dir(directory, member.name, seed)))
                 is not None]
        pairs = [(record, run) for record, run in pairs if record.get("attention")]
        if pairs:
            found.append(Explained(member.name, member.label, [r for r, _ in pairs],
                                   [run for _, run in pairs]))
    return found


def _stack(arrays: list[np.ndarray]) -> np.ndarray | None:
    """(seeds, n, k), or None when the seeds' sentences differ in number."""
    if not arrays or len({array.shape for array in arrays}) > 1:
        return None
    return np.stack(arrays)


def extraction_stats(member: Explained, name: str) -> np.ndarray | None:
    """Per seed, the per-pair AER counts of one extraction: (seeds, pairs, 4)."""
    found = [record.get("extractions", {}).get("counts", {}).get(name)
             for record in member.records]
    if any(counts is None for counts in found):
        return None
    return _stack([np.asarray(counts, dtype=float).reshape(-1, 4) for counts in found])


def flip_stats(member: Explained, which: str) -> np.ndarray | None:
    """Per seed, per sentence, (steps that flipped, steps tested): (seeds, sentences, 2)."""
    return _stack([np.stack([np.asarray(r["faithfulness"]["flips"][which], dtype=float),
                             np.asarray(r["faithfulness"]["steps"], dtype=float)], axis=1)
                   for r in member.records])


def agreement_stats(member: Explained, method: str) -> np.ndarray | None:
    """Per seed, per sentence, (tau, 1), or (0, 0) for a sentence without one."""
    rows = []
    for record in member.records:
        taus = record["faithfulness"]["agreement"].get(method)
        if taus is None:
            return None
        rows.append(np.asarray([[0.0, 0.0] if tau is None else [tau, 1.0] for tau in taus]))
    return _stack(rows)


def _test(a: np.ndarray, b: np.ndarray, scorer, member: Explained, metric: str,
          label_b: str) -> PairTest:
    comparison = compare_across_seeds(a, b, scorer, samples=SAMPLES, seed=12345)
    return PairTest(member.name, label_b, metric, comparison, member.label, label_b)


def claim_tests(members: list[Explained]) -> None:
    """Each member's claims (member.tests: a translation's three, a language model's two),
    Holm-adjusted per claim over the members; and for a translation every reading's tests
    (member.readings), so that both pages print the same statistics, computed once."""
    if not reads_itself(members):
        extraction_tests(members)
    for claim in SELF_CLAIMS if reads_itself(members) else CLAIMS:
        tests = []
        for member in members:
            test = _claim_test(member, claim)
            if test is not None:
                member.tests[claim] = test
                tests.append(test)
        for test, adjusted in zip(tests, holm([t.comparison.p_value for t in tests]),
                                  strict=True):
            test.p_adjusted = adjusted


def _claim_test(member: Explained, claim: str) -> PairTest | None:
    if claim == CLAIMS[0]:
        attention, diagonal = extraction_stats(member, "attention"), \
            extraction_stats(member, "diagonal")
        if attention is None or diagonal is None:
            return None
        return _test(attention, diagonal, aer_scorer, member, "aer", "the diagonal aligner")
    if claim == CLAIMS[1]:
        taus = agreement_stats(member, "gradient")
        if taus is None:
            return None
        return _test(taus, np.zeros_like(taus) + [0.0, 1.0], _mean_or_zero, member,
                     "Kendall's tau", "no agreement (tau 0)")
    top, random = flip_stats(member, "top_attention"), flip_stats(member, "random")
    if top is None or random is None:
        return None
    return _test(top, random, _rate, member, "erasure flip rate",
                 "a random other position")


def _mean_or_zero(sums: np.ndarray) -> np.ndarray:
    return np.divide(sums[..., 0], sums[..., 1], out=np.zeros(sums.shape[:-1]),
                     where=sums[..., 1] > 0)


def _rate(sums: np.ndarray) -> np.ndarray:
    return 100.0 * _mean_or_zero(sums)


def claim_outcome(test: PairTest | None) -> str:
    if test is None:
        return "not measured"
    return {">": "reproduced", "<": "not reproduced"}.get(test.direction, "inconclusive")


def claim_lines(members: list[Explained], claims: tuple[str, ...] = CLAIMS) -> list[str]:
    """One line per member and claim: the outcome and what the test found."""
    lines = []
    for member in members:
        for claim in claims:
            test = member.tests.get(claim)
            found = test.finding if test is not None else "no record to test"
            lines.append(f"{member.label}: {claim}: {claim_outcome(test)} ({found}).")
    return lines


SHORT = ("attention is an alignment", "agrees with gradient x input",
         "top attended matters more than random")


def claim_rows(members: list[Explained], claims: tuple[str, ...] = CLAIMS,
               short: tuple[str, ...] = SHORT) -> list[list[str]]:
    """Member x claim: the outcome, the difference and its interval, the adjusted p."""
    rows = [["member", *short]]
    for member in members:
        row = [member.label]
        for claim in claims:
            test = member.tests.get(claim)
            if test is None or not test.comparison.decided:
                row.append(claim_outcome(test) if test is None else "inconclusive (one seed)")
                continue
            row.append(f"{claim_outcome(test)}: {_difference_text(test)}")
        rows.append(row)
    return rows


def _difference_text(test: PairTest) -> str:
    """A decided test's "+0.109 (0.0792 to 0.134), p < 0.001": the difference, its unadjusted
    95% interval, and the p that decides."""
    low, high = test.comparison.interval() or (0.0, 0.0)
    p = test.p
    p_text = "p < 0.001" if p is not None and p < 0.001 else f"p = {p:.2g}"
    return f"{test.comparison.difference:+.3g} ({low:.3g} to {high:.3g}), {p_text}"


CLAIM_NOTE = ("Each cell: the verdict, the difference across seeds (attention's AER minus the "
              "diagonal's; tau minus 0; the top attended position's flip rate minus a random "
              "one's, in points) with its unadjusted 95% interval, and the p that decides, "
              "Holm-adjusted over the members.")


def _mean_sd(values: list[float], digits: int = 3) -> str:
    """"0.412 ± 0.010" (sd over the seeds), the one value, or "-" for none."""
    return spread(values).text(digits) if values else "-"


def aer_rows(members: list[Explained]) -> list[list[str]]:
    """Member x extraction AER (mean ± sd over seeds), the diagonal's, the rows shifted."""
    names = [name for name in EXTRACTIONS
             if any(extraction_stats(m, name) is not None for m in members)]
    rows = [["member", "seeds", *(LABELS.get(name, name) for name in names),
             "attention, row t-1", "attention, row t+1", "diagonal"]]
    for member in members:
        row = [member.label, str(len(member.records))]
        for name in names:
            stats = extraction_stats(member, name)
            row.append("-" if stats is None else
                       _mean_sd(list(aer_scorer(stats.sum(axis=1)))))
        for shift in ("-1", "1"):
            checks = [run.get("row_check") or {} for run in member.runs]
            row.append(_mean_sd([c["aer"][shift] for c in checks if shift in c.get("aer", {})]))
        diagonal = extraction_stats(member, "diagonal")
        row.append("-" if diagonal is None else f"{aer_scorer(diagonal[0].sum(axis=0)):.3f}")
        rows.append(row)
    return rows


# Every reading of links against two references, across seeds: the diagonal aligner (does it
# beat no model at all?) and the member's own argmax attention (does reading it another way
# help?). Both sides of a test are readings of the same runs on the same pairs, so the test is
# paired by run: what a run's training luck does to both readings cancels.
AGAINST = ("diagonal", "attention")


def extraction_tests(members: list[Explained]) -> dict[tuple[str, str, str], PairTest]:
    """(member, extraction, reference) -> the test of extraction's AER minus the reference's,
    across seeds; p Holm-adjusted over every test against the same reference in the table.
    Each member keeps its own (member.readings)."""
    found: dict[tuple[str, str, str], PairTest] = {}
    own: dict[str, dict[tuple[str, str], PairTest]] = {member.name: {} for member in members}
    for reference in AGAINST:
        family = []
        for member in members:
            base = extraction_stats(member, reference)
            for name in EXTRACTIONS:
                stats = extraction_stats(member, name)
                if (base is None or stats is None or name == reference
                        or stats.shape != base.shape):   # not the same runs and pairs
                    continue
                label = "the diagonal aligner" if reference == "diagonal" else "attention"
                comparison = compare_paired_across_seeds(stats, base, aer_scorer,
                                                         samples=SAMPLES, seed=12345)
                test = PairTest(member.name, label, "aer", comparison, member.label, label,
                                method=PAIRED_METHOD)
                found[(member.name, name, reference)] = test
                own[member.name][(name, reference)] = test
                family.append(test)
        for test, adjusted in zip(family, holm([t.comparison.p_value for t in family]),
                                  strict=True):
            test.p_adjusted = adjusted
    for member in members:
        member.readings = own[member.name]
    return found


def _difference_cell(test: PairTest | None) -> str:
    """"-0.109 (-0.138 to -0.0792), p < 0.001: lower" or "+0.151 (one seed)"."""
    if test is None:
        return "-"
    comparison = test.comparison
    if not comparison.decided:
        return f"{comparison.difference:+.3g} (one seed)"
    word = {">": "lower", "<": "higher"}.get(test.direction, "no difference")
    return f"{_difference_text(test)}: {word}"


def extraction_test_rows(members: list[Explained]) -> list[list[str]]:
    """Member x extraction: AER (mean ± sd), minus the diagonal's and minus attention's with
    their 95% intervals across seeds and Holm-adjusted p (member.readings, made by
    claim_tests, or here when it has not run)."""
    if any(member.readings is None for member in members):
        extraction_tests(members)
    rows = [["member", "reading", "seeds", "AER", "minus the diagonal's",
             "minus attention's"]]
    for member in members:
        for name in EXTRACTIONS:
            stats = extraction_stats(member, name)
            if stats is None:
                continue
            rows.append([member.label, LABELS.get(name, name), str(len(stats)),
                         _mean_sd(list(aer_scorer(stats.sum(axis=1)))),
                         *(_difference_cell((member.readings or {}).get((name, reference)))
                           for reference in AGAINST)])
    return rows


EXTRACTION_TEST_NOTE = (
    "Each reading's AER minus the diagonal aligner's and minus the member's own argmax "
    "attention's on the same pairs, across seeds: both sides read the same runs, so the test "
    "is paired by run (a t over the runs' differences, with the pairs' sampling noise added), "
    "with its unadjusted 95% interval and its p Holm-adjusted over every test against the same "
    "reference in the table: lower or higher when p < 0.05.")


def aligner_line(eflomal: dict | None) -> str:
    """The statistical aligner's AER (DIR/aligner.json), when the report has it."""
    if not eflomal or eflomal.get("aer") is None:
        return ""
    return (f"Beside them, {eflomal['label']}: AER {eflomal['aer']:.3f} on all "
            f"{eflomal.get('pairs', '?')} gold pairs (trained on them and the suite's training "
            f"text).")


def faithfulness_rows(members: list[Explained]) -> list[list[str]]:
    """Per member: erasure flip rates, agreement with each attribution, the permutation and
    adversarial distances, and the BLEU (and exact match) lost with uniform attention."""
    rows = [["member", "flips: top attended %", "random %", "top gradient %",
             "tau: gradient x input", "tau: integrated gradients", "tau: erasure",
             "permutation TVD", "adversarial JSD", "uniform attention: BLEU lost"]]
    for member in members:
        row = [member.label]
        for which in ("top_attention", "random", "top_gradient"):
            stats = flip_stats(member, which)
            row.append("-" if stats is None else _mean_sd(list(_rate(stats.sum(axis=1))), 1))
        for method in ("gradient", "integrated_gradients", "erasure"):
            stats = agreement_stats(member, method)
            row.append("-" if stats is None else
                       _mean_sd(list(_mean_or_zero(stats.sum(axis=1))), 2))
        for key in ("permutation_tvd", "adversarial_jsd"):
            row.append(_mean_sd([float(np.mean(r["faithfulness"][key]))
                                 for r in member.records if r["faithfulness"][key]], 3))
        row.append(uniform_loss(member))
        rows.append(row)
    return rows


def uniform_loss(member: Explained) -> str:
    """Own BLEU minus uniform attention's across seeds: "12.3 (95% CI 10.1 to 14.5)"."""
    own = {"name": member.name, "task": "translation", "runs": member.runs}
    flat = {"name": "uniform", "task": "translation",
            "runs": [record["uniform"] for record in member.records]}
    found = statistics(own, flat, "bleu")
    if found is None:
        return "-"
    comparison = compare_across_seeds(*found, samples=SAMPLES, seed=12345)
    interval = comparison.interval()
    if interval is None:
        return f"{comparison.difference:.1f} (one seed)"
    return f"{comparison.difference:.1f} (95% CI {interval[0]:.1f} to {interval[1]:.1f})"


def gold_title(name: str) -> str:
    """"the dates task's gold" / "the RWTH German-English gold" / the set's own name."""
    if name.startswith("dates task gold"):
        return "the dates task's gold"
    return "the RWTH German-English gold" if "RWTH" in name else name


def gold_line(members: list[Explained]) -> str:
    """Which gold and how many pairs and sentences the figures rest on."""
    record = members[0].records[0]
    extractions = record.get("extractions")
    faith = record["faithfulness"]
    gold = (f"AER on the first {extractions['pairs']} pairs of {gold_title(extractions['gold'])} "
            f"(in {extractions['unit']}; {extractions['skipped']} left out: their units did "
            f"not match the gold's)" if extractions else "no gold alignments for these runs")
    settings = record["settings"]
    methods = settings.get("methods", ["gradient", "integrated_gradients", "erasure"])
    integrated = (f"; integrated gradients with {settings['steps']} points from an all-zero "
                  f"embedding" if "integrated_gradients" in methods else
                  "; attributions: " + ", ".join(LABELS.get(m, m) for m in methods))
    return (f"{gold}; the faithfulness tests on the first {len(faith['steps'])} test sentences "
            f"(the model's own greedy translation forced; adversarial search on "
            f"{settings['adversarial']}{integrated}); uniform attention decodes the whole "
            f"test set as the member was scored.")


def explanation_html(members: list[Explained], eflomal: dict | None, command: str) -> str:
    if not members:
        return ""
    if reads_itself(members):
        return self_attention_html(members, command)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in claim_lines(members))
    claims = html_table(claim_rows(members))
    return ("<h2>Is attention an alignment? Is it an explanation?</h2>"
            f"<p><b>Made by</b> <code>{html.escape(command)} --explain</code>. "
            f"{html.escape(gold_line(members))} Figures are mean ± sd over the seeds "
            f"(n in the table).</p>"
            f"{claims}<p>{html.escape(CLAIM_NOTE)}</p><details><summary>Every test in words, "
            f"and the rule</summary><ul>{items}</ul><p>{html.escape(RULE)}</p></details>"
            f"<h3>AER of every way to read links (lower is better)</h3>"
            f"<p>{html.escape(AER_NOTE)}</p>"
            f"{html_table(aer_rows(members))}<p>{html.escape(aligner_line(eflomal))}</p>"
            f"<h3>Every reading against the diagonal and against attention, across seeds</h3>"
            f"{html_table(extraction_test_rows(members))}"
            f"<p>{html.escape(EXTRACTION_TEST_NOTE)}</p>"
            f"<h3>Faithfulness</h3>"
            f"{html_table(faithfulness_rows(members))}<p>{html.escape(FAITHFULNESS_NOTE)}</p>")


AER_NOTE = (
    "Each is the argmax per target word of what it reads (attention >= 0.3: every source word "
    "with that much weight), merged to the gold's units as attention is; the rows shifted one "
    "step are the member's own row check on the whole gold; the diagonal aligner's is on the "
    "same pairs.")


FAITHFULNESS_NOTE = (
    "Flips: the share of target steps whose chosen token changed when one source position's "
    "weight was zeroed and the rest renormalised (Serrano & Smith 2019). tau: Kendall's rank "
    "correlation per step between attention and an attribution's magnitude, averaged per "
    "sentence. Permutation TVD: the median total variation distance of the output "
    "distribution when a step's weights are shuffled; adversarial JSD: how far (Jensen-Shannon, "
    "0 to 1) the weights can move while the output stays within TVD 0.01 (Jain & Wallace "
    "2019). Uniform attention: equal weight on every source position at every step "
    "(Wiegreffe & Pinter 2019), BLEU lost against the member's own, across seeds.")


def explanation_markdown(members: list[Explained], eflomal: dict | None,
                         command: str) -> list[str]:
    if not members:
        return []
    if reads_itself(members):
        return self_attention_markdown(members, command)
    return ["", "#### Is attention an alignment? Is it an explanation?", "",
            f"`{command} --explain`", "",
            gold_line(members) + " Figures are mean ± sd over the seeds (n in the table).", "",
            markdown_table(claim_rows(members)), "", CLAIM_NOTE, "", "Every test in words:",
            "", *(f"- {line}" for line in claim_lines(members)), "", f"Rule: {RULE}", "",
            f"AER of every way to read links (lower is better). {AER_NOTE}", "",
            markdown_table(aer_rows(members)), "", aligner_line(eflomal), "",
            "Every reading against the diagonal and against attention, across seeds:", "",
            markdown_table(extraction_test_rows(members)), "", EXTRACTION_TEST_NOTE, "",
            "Faithfulness:", "", markdown_table(faithfulness_rows(members)), "",
            FAITHFULNESS_NOTE]


# --- A language model's self-attention -------------------------------------------------------
# An lm suite's records (attnlab.lm.explanation_scores): the LSTMN's attention over its own
# earlier words. No source and no gold, so no AER: the two claims that apply, tested as above,
# and the faithfulness figures with their 95% intervals across seeds.

SELF_CLAIMS = (CLAIMS[1],
               "the most attended earlier word matters more than a random one (erasure flips)")
SELF_SHORT = ("agrees with gradient x input", "top attended earlier word matters more than random")


def reads_itself(members: list[Explained]) -> bool:
    """Whether the records are a language model's (self-attention), not a translation's."""
    return bool(members) and members[0].records[0].get("task") == "lm"


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


def _perplexity(sums: np.ndarray) -> np.ndarray:
    return np.exp(sums[..., 0] / sums[..., 1])


def _interval(comparison: SeedComparison, digits: int) -> str:
    """"12.3 (95% CI 10.1 to 14.5)", or the value and "(one seed)"."""
    value = f"{comparison.difference:.{digits}f}"
    found = comparison.interval()
    if found is None:
        return f"{value} (one seed)"
    return f"{value} (95% CI {found[0]:.{digits}f} to {found[1]:.{digits}f})"


def _figure(stats: np.ndarray | None, scorer, digits: int) -> str:
    """A figure's mean over the seeds with its 95% interval: the claims' test against a zero
    figure on the same sentences (the seeds' spread and the sentences' noise)."""
    if stats is None:
        return "-"
    zero = stats.copy()
    zero[..., 0] = 0.0
    return _interval(compare_across_seeds(stats, zero, scorer, samples=SAMPLES, seed=12345),
                     digits)


def self_attention_rows(members: list[Explained]) -> list[list[str]]:
    """Per member: erasure flip rates, agreement with gradient x input, the permutation test's
    distance, the test perplexity with the model's own attention and with uniform attention,
    and their difference."""
    rows = [["member", "seeds", "flips: top attended %", "random %", "top gradient %",
             "tau: gradient x input", "permutation TVD", "perplexity: own",
             "uniform attention", "uniform minus own"]]
    for member in members:
        row = [member.label, str(len(member.records))]
        row += [_figure(flip_stats(member, which), _rate, 1)
                for which in ("top_attention", "random", "top_gradient")]
        row.append(_figure(agreement_stats(member, "gradient"), _mean_or_zero, 2))
        row.append(_figure(permutation_stats(member), _mean_or_zero, 3))
        own, flat = perplexity_stats(member, "own"), perplexity_stats(member, "uniform")
        for stats in (own, flat):
            row.append("-" if stats is None else
                       _mean_sd(list(_perplexity(stats.sum(axis=1))), 2))
        row.append("-" if own is None or flat is None else _interval(
            compare_across_seeds(flat, own, _perplexity, samples=SAMPLES, seed=12345), 2))
        rows.append(row)
    return rows


def self_attention_line(members: list[Explained]) -> str:
    """What the figures rest on: the sentences and steps tested, the text read."""
    record = members[0].records[0]
    faith = record["faithfulness"]
    text = record["perplexity"]
    return (f"The LSTMN's attention over its own earlier words (its top layer), tested on the "
            f"first {len(faith['steps'])} test sentences as written: {sum(faith['steps'])} "
            f"steps with at least two earlier words (a step with one has nothing to erase or "
            f"rank); the chosen word at a step is the one the model finds most likely there. "
            f"Perplexity with uniform attention reads the whole test text "
            f"({len(text['own'])} sentences of {text.get('text', 'the test file')}). No gold "
            f"alignments for a language model, so no AER.")


SELF_CLAIM_NOTE = ("Each cell: the verdict, the difference across seeds (tau minus 0; the top "
                   "attended earlier word's flip rate minus a random earlier word's, in points) "
                   "with its unadjusted 95% interval, and the p that decides, Holm-adjusted over "
                   "the members.")

SELF_FAITHFULNESS_NOTE = (
    "Flips: the share of steps whose most likely next word changed when one earlier word's "
    "weight was zeroed and the rest renormalised (Serrano & Smith 2019): the most attended, a "
    "random other, or the one gradient x input ranks first. tau: Kendall's rank correlation "
    "per step between the weights and |gradient x input| over the earlier words, averaged per "
    "sentence. Permutation TVD: the median total variation distance of the next-word "
    "distribution when a step's weights are shuffled over its earlier words (Jain & Wallace "
    "2019), averaged per sentence. Perplexity: the test text read with the model's own "
    "attention and with equal weight on every earlier word at every step (Wiegreffe & Pinter "
    "2019); the last column is their difference across seeds. Each interval is across seeds "
    "with the sentences' noise added, as the claims' test; the perplexities are mean ± sd over "
    "the seeds. Not run here: the adversarial attention search (Jain & Wallace 2019).")


def self_attention_html(members: list[Explained], command: str) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>"
                    for line in claim_lines(members, SELF_CLAIMS))
    claims = html_table(claim_rows(members, SELF_CLAIMS, SELF_SHORT))
    return ("<h2>Is self-attention an explanation?</h2>"
            f"<p><b>Made by</b> <code>{html.escape(command)} --explain</code>. "
            f"{html.escape(self_attention_line(members))}</p>"
            f"{claims}<p>{html.escape(SELF_CLAIM_NOTE)}</p><details><summary>Every test in "
            f"words, and the rule</summary><ul>{items}</ul><p>{html.escape(RULE)}</p></details>"
            f"<h3>Faithfulness</h3>{html_table(self_attention_rows(members))}"
            f"<p>{html.escape(SELF_FAITHFULNESS_NOTE)}</p>")


def self_attention_markdown(members: list[Explained], command: str) -> list[str]:
    return ["", "#### Is self-attention an explanation?", "", f"`{command} --explain`", "",
            self_attention_line(members), "",
            markdown_table(claim_rows(members, SELF_CLAIMS, SELF_SHORT)), "", SELF_CLAIM_NOTE,
            "", "Every test in words:", "",
            *(f"- {line}" for line in claim_lines(members, SELF_CLAIMS)), "", f"Rule: {RULE}",
            "", "Faithfulness:", "", markdown_table(self_attention_rows(members)), "",
            SELF_FAITHFULNESS_NOTE]
