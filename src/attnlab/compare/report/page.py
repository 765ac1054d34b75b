"""The suite's report: DIR/report.html (self-contained: figures inline, no scripts, no network)
and DIR/results.md (the tables, for a README), from the finished members' compare.json."""

from __future__ import annotations

import hashlib
import html
import json
import platform
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import torch

from attnlab.errors import UserError
from attnlab.eval.buckets import MIN_BUCKET
from attnlab.files import atomic_output
from attnlab.recipes import RECIPES
from attnlab.viz.report import STYLE, html_table

from ..run.asked import as_asked, asked_members
from ..run.baseline import aligner_baseline
from ..run.lock import report_lock
from ..run.registration import registered_claims
from ..run.runner import RunOptions, read_record, seed_dir
from ..stats.explanations import Explained, claim_tests
from ..stats.seeds import aggregate
from ..stats.verdicts import PairTest, Verdict, claim_verdict, matrix, pairwise
from ..stats.verdicts import rules as rules_text
from ..suite.definition import Suite, titled
from .explanations import explanation_page, gather_explained
from .figures import figures
from .findings import findings
from .tables import (
    markdown_table,
    number,
    paper_rows,
    paper_tables,
    results_rows,
)


def gather(suite: Suite, directory: Path, options: RunOptions
           ) -> tuple[list[dict], list[str]]:
    """Each member's record over its finished seeds (attnlab.compare.stats.seeds), in suite order,
    and what is not finished: members with no seed, or seeds still missing."""
    records, missing = [], []
    seeds = options.seeds_of(suite)
    asked = asked_members(suite, directory)
    for member in suite.members:
        folders = [seed_dir(directory, member.name, k) for k in range(1, seeds + 1)]
        found = [(folder, record) for folder in folders
                 if (record := read_record(folder)) is not None]
        if not found:
            missing.append(member.titled if member.name in asked else
                           f"{member.titled}, left out by --only")
            continue
        if len(found) < seeds:
            missing.append(f"{member.titled}, {len(found)} of {seeds} seeds")
        runs = [with_length_drop(with_exact_match(run, folder)) for folder, run in found]
        record = aggregate(runs)
        record["paper_row"] = member.paper_row   # the suite's current mapping, not the old
        records.append(record)
    return records, missing


def table_notes(records: list[dict]) -> list[str]:
    """What the results table's numbers are (mean ± sd over how many seeds), and the diagonal
    aligner's AER on each gold set: the baseline every attention member's AER is judged by."""
    seeds = sorted({record.get("seeds", 1) for record in records})
    notes = []
    if seeds[-1] > 1:
        counts = " or ".join(str(n) for n in seeds)
        notes.append(f"Scores are mean ± sample standard deviation over the seeds ({counts} "
                     f"per member); a member with one seed shows its value.")
    for about, aer, pairs in diagonal_aers(records).values():
        notes.append(f"The diagonal aligner (target unit t linked to the source unit at the same "
                     f"relative position): AER {aer:.3f} on the members' pairs of "
                     f"{about['title']} ({pairs:,} pairs).")
    return notes


def diagonal_aers(records: list[dict]) -> dict[str, tuple[dict, float, int]]:
    """Each gold set's (record, AER of the diagonal aligner, pairs), from a member's per-pair
    counts of it."""
    from ..stats.across_seeds import aer_scorer

    found: dict[str, tuple[dict, float, int]] = {}
    for record in records:
        for run in record.get("runs") or [record]:
            for alignment in run.get("alignments") or []:
                counts = alignment.get("baseline_counts")
                if counts and alignment["name"] not in found:
                    total = np.asarray(counts, dtype=float).sum(axis=0)
                    found[alignment["name"]] = (alignment["gold"], float(aer_scorer(total)),
                                                len(counts))
    return found


def with_exact_match(run: dict, run_dir: Path) -> dict:
    """A translation run's exact match (% of outputs equal to their reference) beside BLEU,
    computed from the record's texts, when it is the run's own metric: the one its config.json
    chose its best checkpoint by (the dates task's). Of long sentences it would be 0 and say
    nothing."""
    hypotheses, references = run.get("hypotheses"), run.get("references")
    if not (hypotheses and references) or "exact_match" in run.get("scores", {}):
        return run
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        own = config["train"]["early_stopping"]["metric"]
    except (OSError, ValueError, KeyError, TypeError):
        return run   # a run folder without its config says nothing of its metric
    if own == "exact_match":
        same = sum(h == r for h, r in zip(hypotheses, references, strict=True))
        run.setdefault("scores", {})["exact_match"] = 100.0 * same / len(hypotheses)
    return run


def with_length_drop(run: dict) -> dict:
    """A translation run's bleu_drop: BLEU of its shortest source-length bucket minus its
    longest's, each of at least MIN_BUCKET sentences (how much it loses as sentences grow: the
    bottleneck claim's measure); left out with fewer than two such buckets."""
    buckets = [bucket for bucket in run.get("buckets") or []
               if bucket.get("bleu") is not None and bucket.get("count", 0) >= MIN_BUCKET]
    if len(buckets) >= 2 and "bleu_drop" not in run.get("scores", {}):
        run.setdefault("scores", {})["bleu_drop"] = buckets[0]["bleu"] - buckets[-1]["bleu"]
    return run


def write_report(suite: Suite, directory, options: RunOptions) -> list[Path]:
    """Write report.html and results.md into `directory`; returns their paths."""
    directory = Path(directory)
    if not directory.is_dir():
        raise _none_finished(suite, directory)
    with report_lock(directory):
        return _write_report(suite, directory, options)


def _none_finished(suite: Suite, directory: Path) -> UserError:
    return UserError(f"no finished member of suite {suite.name!r} in {directory}: run "
                     f"attnlab compare {suite.argument} --dir {directory} first")


def _write_report(suite: Suite, directory: Path, options: RunOptions) -> list[Path]:
    options = as_asked(directory, options)   # as the runs were made, unless told otherwise
    records, missing = gather(suite, directory, options)
    if not records:
        raise _none_finished(suite, directory)
    command = made_by(suite, directory, options)
    baseline = aligner_baseline(directory, options, records)
    vocabulary = vocabulary_check(directory, records)
    # The statistics once, for both pages: each is hundreds of resampling tests.
    verdict = claim_verdict(suite.expect, records)
    if verdict is not None:
        verdict.registration = registration_lines(suite, directory, records)
    tests = pairwise(records, significance_metrics(suite, records))
    explained = gather_explained(suite, directory, options)   # `--explain`'s records
    claim_tests(explained, explanation_page(suite).claims)
    page = report_page(suite, records, missing, command, baseline, verdict, tests, vocabulary,
                       explained)
    markdown = results_markdown(suite, records, missing, command, baseline, verdict, tests,
                                explained)
    written = []
    for name, text in (("report.html", page), ("results.md", markdown)):
        with atomic_output(directory / name) as file:
            file.write(text)
        written.append(directory / name)
    return written


def made_by(suite: Suite, directory: Path, options: RunOptions) -> str:
    """The command that trains what is missing and writes this report again: the suite, the
    folder, the members asked for (when not all), and every option that changes the runs
    (seeds, data, scale, the RWTH gold), as the runs were asked for (run/asked.py)."""
    parts = [f"attnlab compare {suite.argument} --dir {directory}"]
    asked = asked_members(suite, directory)
    if len(asked) < len(suite.members):
        parts.extend(f"--only {name}" for name in asked)
    if options.seeds is not None:
        parts.append(f"--seeds {options.seeds}")
    if options.data is not None:
        parts.append(f"--data {options.data}")
    if options.scale != 1:
        parts.append(f"--scale {options.scale:g}")
    if options.rwth is not None:
        parts.append(f"--rwth {options.rwth}")
    return " ".join(parts)


def _rerun(command: str) -> str:
    """What running the Made by command again does."""
    every = " (without its --only: every member)" if " --only " in command else ""
    return f"`{command}` trains what is missing of the members it names{every} and writes " \
        "this report again."


def vocabulary_check(directory: Path, records: list[dict]) -> str:
    """Whether every member has the same vocabularies (their *vocab*.json files, byte for
    byte): the suite promises it, and each run builds its own."""
    digests = {}
    files: list[Path] = []
    for record in records:
        for run in record.get("runs") or [record]:
            files = sorted(seed_dir(directory, record["name"], run.get("seed", 1))
                           .glob("*vocab*.json"))
            digests[f"{record['label']} seed {run.get('seed', 1)}"] = tuple(
                hashlib.sha256(f.read_bytes()).hexdigest() for f in files)
    if len(set(digests.values())) <= 1:
        return (f"the same in every member ({', '.join(f.name for f in files)} identical, "
                f"sha256 checked)") if records and files else "not checked (no vocabulary file)"
    groups: dict[tuple, list[str]] = {}
    for label, digest in digests.items():
        groups.setdefault(digest, []).append(label)
    return "NOT the same in every member: " + "; ".join(" = ".join(g) for g in groups.values())


def report_page(suite: Suite, records: list[dict], missing: list[str], command: str,
                baseline: dict | None, verdict: Verdict | None, tests: list[PairTest],
                vocabulary: str = "", explained: list[Explained] | None = None) -> str:
    title = suite.title or f"attnlab compare {suite.name}"
    parts = [f"<h1>{html.escape(title)}</h1>", _answers_html(suite, explained),
             _header(suite, records, missing, command)]
    if vocabulary:
        parts.append(f"<p><b>Vocabulary.</b> {html.escape(vocabulary)}.</p>")
    parts.append(_verdict_html(verdict))
    parts.append("<h2>Findings</h2><ul>" + "".join(
        f"<li>{html.escape(line)}</li>" for line in findings(suite, records, baseline)) + "</ul>")
    parts.append("<h2>Results</h2>" + html_table(results_rows(suite.task, records)) + "".join(
        f"<p>{html.escape(note)}</p>" for note in table_notes(records)))
    parts.append(_significance_html(tests, records))
    if explained:
        parts.append(explanation_page(suite).html(explained, baseline, command))
    parts.append(_seeds_html(suite, records))
    parts.append(_papers_html(suite, records))
    parts.extend(figures(suite, records, command, baseline))
    parts.append(_rows_html(records))
    parts.append(_members_html(records))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")


def _answers_html(suite: Suite, explained: list[Explained] | None) -> str:
    """After --explain, the page opens with its questions' answers, claim by claim."""
    if not explained:
        return ""
    page = explanation_page(suite)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in page.answers(explained))
    return (f"<section class='answers'><h2>{html.escape(page.title)} In short</h2>"
            f"<ul>{items}</ul><p>The tables are in the section of that name below.</p>"
            f"</section>")


def _header(suite: Suite, records: list[dict], missing: list[str], command: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"<p><b>Claim.</b> {html.escape(suite.claim)}</p>" if suite.claim else "",
             f"<p><b>Made by</b> <code>{html.escape(command)}</code> on {when}; "
             f"{html.escape(platform.processor() or platform.machine())}, "
             f"torch {html.escape(torch.__version__)}.</p>"]
    if suite.scale_note:
        lines.append(f"<p><b>Scale.</b> {html.escape(suite.scale_note)}</p>")
    lines.append(f"<p><b>Budget and seeds.</b> {html.escape(budget_text(suite, records))}</p>")
    if missing:
        lines.append(f"<p><b>Not finished yet:</b> {html.escape('; '.join(missing))}. "
                     f"{html.escape(_rerun(command))}</p>")
    return "".join(lines)


def registration_lines(suite: Suite, directory: Path, records: list[dict]) -> list[str]:
    """Whether the claims decided are those registered when the first run started
    (run.registration); when they changed since, the first encoding's verdict too."""
    found = registered_claims(directory)
    if found is None:
        return [f"The claims were not registered before the runs ({directory.name} has no "
                f"claims.json: its runs were made before attnlab registered claims), so nothing "
                f"here shows that they were fixed before the results."]
    when, first = found
    if first == suite.expect:
        return [f"The claims were registered when the first run started ({when}) and have not "
                f"changed since."]
    old = claim_verdict(first, records)
    return [f"The claims changed after they were registered when the first run started "
            f"({when}). Under the first encoding the verdict is "
            f"{old.outcome if old else 'none (it named no pair)'}:",
            *(f"first encoding: {line}" for line in (old.lines if old else []))]


def _verdict_html(verdict: Verdict | None) -> str:
    if verdict is None:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>"
                    for line in [*verdict.lines, *verdict.registration])
    rules = "".join(f"<li>{html.escape(rule)}</li>" for rule in rules_text())
    return (f"<h2>Verdict: {html.escape(verdict.outcome)}</h2><p>What the claim predicts, pair "
            f"by pair, and what the members show:</p><ul>{items}</ul><details><summary>The "
            f"rule</summary><ul>{rules}</ul></details>")


def _significance_html(tests: list[PairTest], records: list[dict]) -> str:
    if not tests:
        return ""
    rows = [["member A", "member B", "metric", "finding", "test"]]
    labels = {record["name"]: record["label"] for record in records}
    rows.extend([labels.get(test.a, test.a), labels.get(test.b, test.b), test.metric,
                 test.sentence, test.method] for test in tests)
    metrics = list(dict.fromkeys(test.metric for test in tests))
    tables = "".join(html_table(matrix(tests, records, metric)) for metric in metrics)
    return ("<h2>Is the difference real?</h2><p>Every pair of members across their seeds "
            "(a training run is the unit of replication): the difference of their mean scores, "
            "A - B, with its p-value, Holm-adjusted over every pair on every metric. In each table "
            "the row's member against the column's: better / worse: significantly (p &lt; 0.05); "
            "=: no significant difference; ?: a member with fewer than three seeds, whose "
            "training variance is not measured, so nothing is decided (for AER and perplexity, "
            f"better means lower).</p>{tables}<details><summary>Every pair in words</summary>"
            f"{html_table(rows)}</details>")


def _seeds_html(suite: Suite, records: list[dict]) -> str:
    """The figures of every seed run, folded away."""
    if max(record.get("seeds", 1) for record in records) < 2:
        return ""
    columns = RECIPES[suite.task].comparison.columns
    rows = [["member", "seed", *(name for name, _, _ in columns), "updates", "epochs",
             "stopped by", "compute minutes"]]
    for record in records:
        for run in record["runs"]:
            rows.append([record["label"], str(run.get("seed", 1)),
                         *(number(run["scores"].get(key), digits) for _, key, digits in columns),
                         number(run.get("updates"), 0), number(run.get("epochs"), 0),
                         str(run.get("stopped_by", "-")), number(run.get("compute_minutes"), 1)])
    return ("<details><summary>The figures of every seed</summary>" + html_table(rows) +
            "</details>")


def significance_metrics(suite: Suite, records: list[dict]) -> tuple[str, ...]:
    """The metrics compared pair by pair: the task's main scores, and AER where scored."""
    keys = tuple(key for _, key, _ in RECIPES[suite.task].comparison.columns)
    if any(record.get("alignments") for record in records):
        keys += ("aer",)
    return keys


def budget_text(suite: Suite, records: list[dict]) -> str:
    """How long the members trained and why each stopped, and over how many seeds."""
    budget = suite.budget.describe() if suite.budget else None
    as_run = {str(r["budget"]) for r in records if r.get("budget")}   # scale applied
    if len(as_run) == 1:
        ran = as_run.pop()
        budget = ran if budget is None else budget if budget.startswith(ran) else \
            f"{ran} (the suite's {budget}, scaled by --scale)"
    budget = budget or "each member's config"
    seeds = sorted({record.get("seeds", 1) for record in records})
    reasons = {r.get("stopped") for r in records if r.get("stopped")}
    stopped = (f"every member: {reasons.pop()}" if len(reasons) == 1 else
               "; ".join(f"{r['label']}: {r['stopped']}" for r in records if r.get("stopped")))
    timed = [r["label"] for r in records if "wall time" in str(r.get("budget", ""))]
    wall = (f" {', '.join(timed)} trained for wall time (as long as another member), so their "
            f"budget depends on the machine." if timed else "")
    return (f"Every member trains for {budget}, with {'/'.join(map(str, seeds))} seed(s). "
            f"Stopped: {stopped}.{wall}")


def _papers_html(suite: Suite, records: list[dict]) -> str:
    parts = []
    for table in paper_tables(suite.paper):
        parts.append(f"<h3>{html.escape(table.citation)}</h3><p>Other data and scale: "
                     f"{html.escape(table.setting)}. {html.escape(table.note)}</p>")
        parts.append(html_table(paper_rows(table, records, suite.task)))
    if not parts:
        return ""
    return "<h2>The papers' figures (other data, other scale)</h2>" + "".join(parts)


def _rows_html(records: list[dict]) -> str:
    rows = {record["attention_row"] for record in records if record.get("attention_row")}
    if not rows:
        return ""
    items = "".join(f"<li>{html.escape(row)}</li>" for row in sorted(rows))
    return ("<h2>Which attention row belongs to which output word</h2><p>In every heatmap and "
            "AER above, the row for output word t is the attention that produced it:</p>"
            f"<ul>{items}</ul><p>The check, AER when output word t takes the links of row t-1 "
            "or t+1 instead, is a reading of <code>--explain</code>, tested against row t "
            "across seeds.</p>")


def _members_html(records: list[dict]) -> str:
    rows = [["member", "config", "overrides", "checkpoint scored"]]
    rows.extend([titled(r["label"], r["name"]), Path(r["config"]).name, " ".join(r["overrides"]),
                 r.get("checkpoint", "-")] for r in records)
    return "<h2>Members</h2>" + html_table(rows)


def results_markdown(suite: Suite, records: list[dict], missing: list[str], command: str,
                     baseline: dict | None, verdict: Verdict | None,
                     tests: list[PairTest], explained: list[Explained] | None = None) -> str:
    lines = [f"### {suite.title or suite.name}", "", f"`{command}`", ""]
    if explained:
        page = explanation_page(suite)
        lines += [f"**{page.title} In short:**", "",
                  *(f"- {line}" for line in page.answers(explained)), ""]
    if suite.scale_note:
        lines += [suite.scale_note, ""]
    lines += [budget_text(suite, records), ""]
    lines += [markdown_table(results_rows(suite.task, records)), ""]
    lines += [note for line in table_notes(records) for note in (line, "")]
    if baseline and baseline.get("aer") is not None:
        lines += [f"{baseline['label']}: AER {baseline['aer']:.3f} on the same RWTH sentences.",
                  ""]
    for table in paper_tables(suite.paper):
        lines += [f"{table.citation} ({table.setting}; other data and scale):", "",
                  markdown_table(paper_rows(table, records, suite.task)), ""]
    if verdict is not None:
        lines += [f"**Verdict: {verdict.outcome}.**", "",
                  *(f"- {line}" for line in [*verdict.lines, *verdict.registration]),
                  "", f"Rule: {' '.join(rules_text())}", ""]
    lines += [f"- {line}" for line in findings(suite, records, baseline)]
    if tests:
        lines += ["", "Pairwise across seeds (row against column: the difference of the means, "
                  "row - column, and its p, Holm-adjusted over every pair on every metric; "
                  "better / worse: significantly, p < 0.05; =: no significant difference; ?: "
                  "fewer than three seeds, nothing decided; for AER and perplexity lower is "
                  "better). Every pair in words, with its 95% interval and the seeds behind it:",
                  ""]
        lines += [f"- {test.sentence}" for test in tests]
        for metric in dict.fromkeys(test.metric for test in tests):
            lines += ["", markdown_table(matrix(tests, records, metric))]
    if explained:
        lines += explanation_page(suite).markdown(explained, baseline, command)
    if missing:
        lines += ["", f"Not finished: {'; '.join(missing)}. {_rerun(command)}"]
    return "\n".join(lines) + "\n"
