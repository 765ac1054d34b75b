"""The figures of a suite's report (attnlab.compare.report.page), drawn from the members'
aggregated records as inline PNGs (attnlab.viz.comparison)."""

from __future__ import annotations

import html

import numpy as np

from attnlab.eval.buckets import MIN_BUCKET
from attnlab.recipes import RECIPES
from attnlab.viz import comparison
from attnlab.viz.report import data_uri, html_table

from ..suite.definition import Suite
from .papers import paper_aers
from .tables import gold_names


def _figure(png: bytes, caption: str, command: str) -> str:
    text = html.escape(caption)
    return (f'<figure><img src="{data_uri(png)}" alt="{text}"><figcaption>{text} '
            f"Made by <code>{html.escape(command)}</code>.</figcaption></figure>")


def figures(suite: Suite, records: list[dict], command: str, baseline: dict | None
            ) -> list[str]:
    """The report's figures, each with its caption and the command that made it: BLEU by
    source length, the validation curves, AER per gold, one sentence in every member."""
    parts = ["<h2>Figures</h2>"]
    if any("buckets" in record for record in records):   # scored by source length
        parts.append(_length_figure(records, command))
    curves = {r["label"]: r["curves"][0] for r in records if r.get("curves") and r["curves"][0]}
    if curves:
        label = RECIPES[suite.task].comparison.curve_label
        others = {r["label"]: r["curves"][1:] for r in records if len(r.get("curves", [])) > 1}
        seeds = " Seed 1 is drawn with markers, every other seed as a faint line." \
            if others else ""
        parts.append(_figure(comparison.curves_png(
            curves, xlabel="updates", ylabel=label, title=f"{label} against updates",
            others=others),
            f"{label} at every validation against the updates made so far.{seeds}", command))
    parts.extend(_aer_figures(records, command, baseline))
    examples = [[r["label"], r["example"].get("translation", "")] for r in records
                if r.get("example") and "translation" in r["example"]]
    if examples:
        source = next(r["example"]["source"] for r in records if r.get("example"))
        parts.append(f"<h3>One sentence, every member</h3><p>{html.escape(source)}"
                     f"{html.escape(_one_seed(records))}</p>"
                     + html_table([["member", "translation (beam search)"], *examples]))
    panels = _panels(records)
    if panels:
        sentence = next(r["example"]["source"] for r in records if r.get("example"))
        # what the members' examples were read in (records written before it was kept: words)
        units = next((r["example"]["units"] for r in records
                      if r.get("example") and r["example"].get("units")), "words")
        parts.append(_figure(comparison.heatmap_grid_png(
            panels, title=f"Attention for the same sentence: {sentence}", units=units),
            f"Attention of each member's translation of the same sentence (rows: the output "
            f"{units}; columns: the source {units}).{_one_seed(records)}", command))
    return parts


def _length_figure(records: list[dict], command: str) -> str:
    """BLEU by source length, or one sentence saying why there is nothing to draw."""
    # A bucket of a handful of sentences gives a BLEU that says little: left as a gap.
    series = {r["label"]: [(b["label"], b["bleu"] if b["count"] >= MIN_BUCKET else None,
                            b["count"]) for b in r["buckets"]] for r in records}
    drawn = max((sum(value is not None for _, value, _ in items) for items in series.values()),
                default=0)
    if drawn < 2:
        return ("<p>BLEU by source length is not drawn: the test sentences fall in fewer than "
                f"two length buckets of at least {MIN_BUCKET} sentences.</p>")
    seeds = max(r.get("seeds", 1) for r in records)
    mean = f" (the mean over {seeds} seeds)" if seeds > 1 else ""
    return _figure(comparison.length_curves_png(
        series, title="BLEU by source length (test set, words)"),
        f"BLEU{mean} of each member on the test sentences grouped by source length (buckets "
        f"of fewer than {MIN_BUCKET} sentences are not drawn).", command)


def _aer_figures(records: list[dict], command: str, baseline: dict | None) -> list[str]:
    parts = []
    for gold, about in gold_names(records).items():
        values = {r["label"]: next((a["aer"] for a in r.get("alignments") or []
                                    if a["name"] == gold), None) for r in records}
        references = {}
        if baseline and about["kind"] == "rwth" and baseline.get("aer") is not None:
            references[baseline["label"]] = baseline["aer"]
            references.update(paper_aers())
        errors = {r["label"]: a["spread"].sd for r in records for a in r.get("alignments") or []
                  if a["name"] == gold and a.get("spread") is not None and a["spread"].n > 1}
        name = about["title"]
        lines = "; dashed lines: other aligners" if references else ""
        whiskers = "; whiskers: the standard deviation over seeds" if errors else ""
        parts.append(_figure(comparison.bars_png(
            values, ylabel="AER (lower is better)", title=f"AER on {name}",
            references=references or None, errors=errors or None),
            f"Alignment error rate of each member's argmax attention (forced decoding of the "
            f"reference) on {name}{lines}{whiskers}.", command))
    return parts


def _panels(records: list[dict]):
    panels = []
    for record in records:
        example = record.get("example") or {}
        if example.get("weights") is None or "target_tokens" not in example:
            continue
        panels.append((record["label"], np.asarray(example["weights"], dtype=float),
                       example["source_tokens"], example["target_tokens"]))
    return panels


def _one_seed(records: list[dict]) -> str:
    """" From one run of each member: its seed 1." where members have several seeds (what is
    shown is then one run's, not a mean), else ""."""
    if all(record.get("seeds", 1) == 1 for record in records):
        return ""
    seeds = sorted({(record.get("runs") or [record])[0].get("seed", 1) for record in records})
    return (f" From one run of each member (seed {', '.join(map(str, seeds))}), not a mean "
            f"over the seeds.")
