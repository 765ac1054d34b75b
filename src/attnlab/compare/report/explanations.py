"""The report's answer to "is attention an alignment, is it an explanation?": the pages of the
numbers attnlab.compare.stats.explanations computes from the runs' explanation records
(attnlab.compare.run.explain_records), member by member and across seeds. Which page a suite
gets is asked of its task's record (what its attention reads: the source, or itself)."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlab.explain.controls import ERASED
from attnlab.explain.methods import LABELS, TOLERANCE
from attnlab.recipes import RECIPES
from attnlab.viz.report import html_table

from ..run.explain_records import asked, explained_seeds, read_explanation
from ..run.layout import RunOptions, read_record, seed_dir
from ..stats.across_seeds import Scorer, SeedComparison, aer_scorer
from ..stats.explanations import (
    AGAINST,
    EXPLANATION_CLAIMS,
    Explained,
    against_zero,
    agreement_stats,
    extraction_stats,
    flip_stats,
    mean_or_zero,
    permutation_stats,
    perplexity,
    perplexity_stats,
    rate,
    reading_names,
    uniform_loss,
    uniform_minus_own_perplexity,
)
from ..stats.seeds import spread
from ..stats.verdicts import PairTest
from ..suite.definition import Suite
from .controls import Block, control_blocks
from .layer_alignment import layer_blocks
from .layer_faithfulness import layer_block
from .tables import markdown_table

RULE = ("Each claim is tested per member across its seeds (Welch's t over the seeds' scores "
        "with the test set's sentence noise added, as the pairwise tables; paired by run, a t "
        "over the runs' differences with the same noise added, where both sides read the same "
        "runs: the controls of comparable weight and ERASER), its p Holm-adjusted over the "
        "members tested for that claim: reproduced when significantly so (p < 0.05), not "
        "reproduced when significantly the other way, inconclusive otherwise.")


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


def claim_outcome(test: PairTest | None) -> str:
    if test is None:
        return "not measured"
    return {">": "reproduced", "<": "not reproduced"}.get(test.direction, "inconclusive")


def answer_lines(members: list[Explained], claims: tuple[str, ...]) -> list[str]:
    """Each claim in a line, for the page's opening: for how many members it is reproduced,
    not reproduced or left open, and which ("attention is an alignment: reproduced for 8 of
    9 members; inconclusive for hard")."""
    lines = []
    for claim in claims:
        outcomes: dict[str, list[str]] = {}
        for member in members:
            outcomes.setdefault(claim_outcome(member.tests.get(claim)), []).append(member.label)
        found = outcomes.pop("reproduced", [])
        rest = "; ".join(f"{outcome} for {', '.join(labels)}"
                         for outcome, labels in outcomes.items())
        lines.append(f"{EXPLANATION_CLAIMS[claim].text}: reproduced for {len(found)} of "
                     f"{len(members)} members{'; ' + rest if rest else ''}.")
    return lines


def claim_lines(members: list[Explained], claims: tuple[str, ...]) -> list[str]:
    """One line per member and claim: the outcome and what the test found."""
    lines = []
    for member in members:
        for claim in claims:
            test = member.tests.get(claim)
            found = test.finding if test is not None else "no record to test"
            lines.append(f"{member.label}: {EXPLANATION_CLAIMS[claim].text}: "
                         f"{claim_outcome(test)} ({found}).")
    return lines


def claim_rows(members: list[Explained], claims: tuple[str, ...]) -> list[list[str]]:
    """Member x claim: the outcome, the difference and its interval, the adjusted p."""
    rows = [["member", *(EXPLANATION_CLAIMS[claim].short for claim in claims)]]
    for member in members:
        row = [member.label]
        for claim in claims:
            test = member.tests.get(claim)
            if test is None or not test.comparison.decided:
                row.append(claim_outcome(test) if test is None else "inconclusive (< 3 seeds)")
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


def claim_note(claims: tuple[str, ...]) -> str:
    """What a cell of the claims' table says, its differences named claim by claim."""
    differences = "; ".join(EXPLANATION_CLAIMS[claim].difference for claim in claims)
    return (f"Each cell: the verdict, the difference across seeds ({differences}) with its "
            f"unadjusted 95% interval, and the p that decides, Holm-adjusted over the members.")


def _mean_sd(values: list[float], digits: int = 3) -> str:
    """"0.412 ± 0.010" (sd over the seeds), the one value, or "-" for none."""
    return spread(values).text(digits) if values else "-"


def aer_rows(members: list[Explained]) -> list[list[str]]:
    """Member x reading AER (mean ± sd over seeds), the diagonal's last."""
    names = [name for name in reading_names(members)
             if any(extraction_stats(m, name) is not None for m in members)]
    rows = [["member", "seeds", *(LABELS.get(name, name) for name in names), "diagonal"]]
    for member in members:
        row = [member.label, str(len(member.records))]
        for name in names:
            stats = extraction_stats(member, name)
            row.append("-" if stats is None else
                       _mean_sd(list(aer_scorer(stats.sum(axis=1)))))
        diagonal = extraction_stats(member, "diagonal")
        row.append("-" if diagonal is None else f"{aer_scorer(diagonal[0].sum(axis=0)):.3f}")
        rows.append(row)
    return rows


def gap_rows(members: list[Explained]) -> list[list[str]]:
    """Member x integrated gradients' completeness gap over every pair read (all seeds): the
    median and worst gap in nats, the share of pairs above the tolerance, the median points;
    no rows when no record computed them."""
    rows = [["member", "pairs", "median gap (nats)", "worst gap", f"above {TOLERANCE:g}",
             "median points"]]
    for member in members:
        found = [record.get("extractions", {}).get("integrated_gradients") or {}
                 for record in member.records]
        gaps = [gap for one in found for gap in one.get("gap", [])]
        points = [count for one in found for count in one.get("points", [])]
        if gaps:
            above = sum(gap > TOLERANCE for gap in gaps) / len(gaps)
            rows.append([member.label, str(len(gaps)), f"{np.median(gaps):.2g}",
                         f"{max(gaps):.2g}", f"{above:.0%}", f"{np.median(points):.0f}"])
    return rows if len(rows) > 1 else []


GAP_NOTE = (
    "Integrated gradients' completeness gap: a row of integrated gradients sums to log p(y_t | "
    "x) - log p(y_t | baseline) up to the integral's error; the gap is the worst row's, in nats. "
    f"The points are doubled until it is at most {TOLERANCE:g} (or a cap is reached, said in "
    "the record). Where log p steps along the path (local-p's window moving, hard attention's "
    "argmax switching) no rule meets it, and the gap says how far the attributions are from "
    "complete.")


def _difference_cell(test: PairTest | None) -> str:
    """"-0.109 (-0.138 to -0.0792), p < 0.001: lower" or "+0.151 (< 3 seeds)"."""
    if test is None:
        return "-"
    comparison = test.comparison
    if not comparison.decided:
        return f"{comparison.difference:+.3g} (< 3 seeds)"
    word = {">": "lower", "<": "higher"}.get(test.direction, "no difference")
    return f"{_difference_text(test)}: {word}"


def extraction_test_rows(members: list[Explained]) -> list[list[str]]:
    """Member x reading: AER (mean ± sd), minus the diagonal's and minus attention's with
    their 95% intervals across seeds and Holm-adjusted p (member.readings, made by
    claim_tests)."""
    rows = [["member", "reading", "seeds", "AER", "minus the diagonal's",
             "minus attention's"]]
    for member in members:
        for name in reading_names(members):
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
             "second attended %", "random of weight %", "tau: gradient x input",
             "tau: integrated gradients", "tau: erasure", "permutation TVD", "adversarial JSD",
             "uniform attention: BLEU lost"]]
    for member in members:
        row = [member.label]
        for which in ERASED:
            row.append(_seeds_cell(flip_stats(member, which), rate, 1))
        for method in ("gradient", "integrated_gradients", "erasure"):
            row.append(_seeds_cell(agreement_stats(member, method), mean_or_zero, 2))
        for key in ("permutation_tvd", "adversarial_jsd"):
            row.append(_mean_sd([float(np.mean(r["faithfulness"][key]))
                                 for r in member.records if r["faithfulness"][key]], 3))
        row.append(_uniform_text(uniform_loss(member)))
        rows.append(row)
    return rows


def _seeds_cell(stats: np.ndarray | None, scorer: Scorer, digits: int) -> str:
    """A figure's mean ± sd over the seeds (stats: per seed, per sentence), "-" for none."""
    return "-" if stats is None else _mean_sd(list(scorer(stats.sum(axis=1))), digits)


def _uniform_text(comparison: SeedComparison | None) -> str:
    """Own BLEU minus uniform attention's across seeds: "12.3 (95% CI 10.1 to 14.5)"."""
    if comparison is None:
        return "-"
    interval = comparison.interval()
    if interval is None:
        return f"{comparison.difference:.1f} (< 3 seeds)"
    return f"{comparison.difference:.1f} (95% CI {interval[0]:.1f} to {interval[1]:.1f})"


def gold_line(members: list[Explained]) -> str:
    """Which gold and how many pairs and sentences the figures rest on."""
    record = members[0].records[0]
    extractions = record.get("extractions")
    faith = record["faithfulness"]
    gold = (f"AER on the first {extractions['pairs']} pairs of {extractions['gold']['title']} "
            f"(in {extractions['unit']}; {extractions['skipped']} left out: their units did "
            f"not match the gold's)" if extractions else "no gold alignments for these runs")
    settings = record["settings"]
    methods = settings.get("methods", ["gradient", "integrated_gradients", "erasure"])
    integrated = (f"; integrated gradients with {settings['steps']} points from an all-zero "
                  f"embedding" if "integrated_gradients" in methods else
                  "; attributions: " + ", ".join(LABELS.get(m, m) for m in methods) if methods
                  else "; no attribution asked for")
    return (f"{gold}; the faithfulness tests on the first {len(faith['steps'])} test sentences "
            f"(the model's own greedy translation forced; adversarial search on "
            f"{settings['adversarial']}{integrated}); uniform attention decodes the whole "
            f"test set as the member was scored.")


SOURCE_CLAIMS = ("alignment", "agreement", "erasure", "erasure, second", "comprehensiveness",
                 "sufficiency")


AER_NOTE = (
    "Each is the argmax per target word of what it reads (attention >= 0.3: every source word "
    "with that much weight; row t-1 and t+1: word t given the links of the row before or after "
    "its own; attention x value norm: the weight times the norm of what the source state adds, "
    "Kobayashi et al. 2020), merged to the gold's units as attention is; the diagonal "
    "aligner's is on the same pairs.")


FAITHFULNESS_NOTE = (
    "Flips: the share of target steps whose chosen token changed when one source position's "
    "weight was zeroed and the rest renormalised (Serrano & Smith 2019): the most attended, a "
    "random other, the one gradient x input ranks first, and two of comparable weight: the "
    "second most attended and a random one holding at least 0.05 of the weight. tau: "
    "Kendall's rank correlation per step between attention and an attribution's magnitude, "
    "averaged per sentence. Permutation TVD: the median total variation distance of the output "
    "distribution when a step's weights are shuffled; adversarial JSD: how far (Jensen-Shannon, "
    "0 to 1) the weights can move while the output stays within TVD 0.01 (Jain & Wallace "
    "2019). Uniform attention: equal weight on every source position at every step "
    "(Wiegreffe & Pinter 2019), BLEU lost against the member's own, across seeds, paired by "
    "run (each run decoded both ways).")


# --- A language model's self-attention -------------------------------------------------------
# An lm suite's records (attnlab.lm.explanation_scores): the LSTMN's attention over its own
# earlier words. No source and no gold, so no AER: the two claims that apply, tested as above,
# and the faithfulness figures with their 95% intervals across seeds.

SELF_CLAIMS = ("agreement", "erasure, earlier word", "erasure, second earlier word",
               "comprehensiveness", "sufficiency")


def _interval(comparison: SeedComparison, digits: int) -> str:
    """"12.3 (95% CI 10.1 to 14.5)", or the value and "(< 3 seeds)"."""
    value = f"{comparison.difference:.{digits}f}"
    found = comparison.interval()
    if found is None:
        return f"{value} (< 3 seeds)"
    return f"{value} (95% CI {found[0]:.{digits}f} to {found[1]:.{digits}f})"


def _figure(stats: np.ndarray | None, scorer, digits: int) -> str:
    """A figure's mean over the seeds with its 95% interval (stats.explanations.against_zero)."""
    return "-" if stats is None else _interval(against_zero(stats, scorer), digits)


def self_attention_rows(members: list[Explained]) -> list[list[str]]:
    """Per member: erasure flip rates, agreement with gradient x input, the permutation test's
    distance, the test perplexity with the model's own attention and with uniform attention,
    and their difference."""
    rows = [["member", "seeds", "flips: top attended %", "random %", "top gradient %",
             "second attended %", "random of weight %", "tau: gradient x input",
             "permutation TVD", "perplexity: own", "uniform attention", "uniform minus own"]]
    for member in members:
        row = [member.label, str(len(member.records))]
        row += [_figure(flip_stats(member, which), rate, 1) for which in ERASED]
        row.append(_figure(agreement_stats(member, "gradient"), mean_or_zero, 2))
        row.append(_figure(permutation_stats(member), mean_or_zero, 3))
        own, flat = perplexity_stats(member, "own"), perplexity_stats(member, "uniform")
        for stats in (own, flat):
            row.append("-" if stats is None else
                       _mean_sd(list(perplexity(stats.sum(axis=1))), 2))
        difference = uniform_minus_own_perplexity(member)
        row.append("-" if difference is None else _interval(difference, 2))
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



SELF_FAITHFULNESS_NOTE = (
    "Flips: the share of steps whose most likely next word changed when one earlier word's "
    "weight was zeroed and the rest renormalised (Serrano & Smith 2019): the most attended, a "
    "random other, the one gradient x input ranks first, the second most attended, or a random "
    "one holding at least 0.05 of the weight. tau: Kendall's rank correlation "
    "per step between the weights and |gradient x input| over the earlier words, averaged per "
    "sentence. Permutation TVD: the median total variation distance of the next-word "
    "distribution when a step's weights are shuffled over its earlier words (Jain & Wallace "
    "2019), averaged per sentence. Perplexity: the test text read with the model's own "
    "attention and with equal weight on every earlier word at every step (Wiegreffe & Pinter "
    "2019); the last column is their difference across seeds, paired by run. Each interval "
    "is across seeds "
    "with the sentences' noise added, as the claims' test; the perplexities are mean ± sd over "
    "the seeds. Not run here: the adversarial attention search (Jain & Wallace 2019).")


def source_blocks(members: list[Explained], eflomal: dict | None) -> tuple[str, list[Block]]:
    """A decoder's attention over the source: the gold it is read on, every reading's AER and
    tests, the faithfulness figures."""
    return (gold_line(members) + " Figures are mean ± sd over the seeds (n in the table)."), [
        ("AER of every way to read links (lower is better)", aer_rows(members),
         f"{AER_NOTE} {aligner_line(eflomal)}".strip()),
        *layer_blocks(members, eflomal),
        ("Every reading against the diagonal and against attention, across seeds",
         extraction_test_rows(members), EXTRACTION_TEST_NOTE),
        ("Faithfulness", faithfulness_rows(members), FAITHFULNESS_NOTE),
        *layer_block(members),
        *control_blocks(members, _seeds_cell),
        *([("Integrated gradients' completeness", gaps, GAP_NOTE)]
          if (gaps := gap_rows(members)) else [])]


def self_attention_blocks(members: list[Explained], _: dict | None) -> tuple[str, list[Block]]:
    """Self-attention over earlier words: no gold, so the faithfulness figures alone."""
    return self_attention_line(members), [
        ("Faithfulness", self_attention_rows(members), SELF_FAITHFULNESS_NOTE),
        *control_blocks(members, _figure)]




@dataclass(frozen=True)
class ExplanationPage:
    """The explanation section of one kind of attention: its title, its claims (keys of
    EXPLANATION_CLAIMS), and its blocks(members, the eflomal baseline) -> (the lead sentence,
    the blocks after the claims)."""

    title: str
    claims: tuple[str, ...]
    blocks: Callable[[list[Explained], dict | None], tuple[str, list[Block]]]

    @property
    def claim_note(self) -> str:
        return claim_note(self.claims)

    def answers(self, members: list[Explained]) -> list[str]:
        """The page's opening: each claim's outcome over the members (answer_lines)."""
        return answer_lines(members, self.claims)

    def html(self, members: list[Explained], eflomal: dict | None, command: str) -> str:
        lead, blocks = self.blocks(members, eflomal)
        items = "".join(f"<li>{html.escape(line)}</li>"
                        for line in claim_lines(members, self.claims))
        return "".join([
            f"<h2>{html.escape(self.title)}</h2><p><b>Made by</b> <code>"
            f"{html.escape(command)} --explain</code>. {html.escape(lead)}</p>",
            html_table(claim_rows(members, self.claims)),
            f"<p>{html.escape(self.claim_note)}</p><details><summary>Every test in words, and "
            f"the rule</summary><ul>{items}</ul><p>{html.escape(RULE)}</p></details>",
            *(f"<h3>{html.escape(heading)}</h3>{html_table(rows)}<p>{html.escape(note)}</p>"
              for heading, rows, note in blocks)])

    def markdown(self, members: list[Explained], eflomal: dict | None,
                 command: str) -> list[str]:
        lead, blocks = self.blocks(members, eflomal)
        lines = ["", f"#### {self.title}", "", f"`{command} --explain`", "", lead, "",
                 markdown_table(claim_rows(members, self.claims)), "", self.claim_note, "",
                 "Every test in words:", "",
                 *(f"- {line}" for line in claim_lines(members, self.claims)), "",
                 f"Rule: {RULE}"]
        for heading, rows, note in blocks:
            lines += ["", f"{heading}:", "", markdown_table(rows), "", note]
        return lines


# Keyed by what a task's attention reads (attnlab.recipes: Comparison.explanation_reads).
PAGES = {"source": ExplanationPage("Is attention an alignment? Is it an explanation?",
                                   SOURCE_CLAIMS, source_blocks),
         "itself": ExplanationPage("Is self-attention an explanation?", SELF_CLAIMS,
                                   self_attention_blocks)}


def explanation_page(suite: Suite) -> ExplanationPage:
    return PAGES[RECIPES[suite.task].comparison.explanation_reads]
