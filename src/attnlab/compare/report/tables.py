"""The suite's tables as rows (first row the header): ours per member, and the papers' figures
beside ours. Shared by report.html and results.md."""

from __future__ import annotations

import math

from attnlab.recipes import RECIPES

from ..stats.seeds import text
from .papers import PaperTable, tables_for


def number(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, int) or digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def gold_names(records: list[dict]) -> dict[str, dict]:
    """The gold sets any member was scored on, in first-seen order: name -> its record
    (GoldSet.record: kind, title, short)."""
    golds: dict[str, dict] = {}
    for record in records:
        for alignment in record.get("alignments") or []:
            golds.setdefault(alignment["name"], alignment["gold"])
    return golds


def gold_column(alignment: dict) -> str:
    """The results table's column of a gold set: "AER RWTH", "AER dates"."""
    return f"AER {alignment['gold']['short']}"


def results_rows(task: str, records: list[dict]) -> list[list[str]]:
    """One row per member: its scores (mean ± sd over the seeds when there are several), its
    updates and its own compute time (updates x median ms per update: not wall time, which
    counts pauses and validations and whatever else ran on the machine)."""
    # a score no member has (exact match of a suite of long sentences) is no column
    columns = [column for column in RECIPES[task].comparison.columns
               if any(column[1] in record.get("scores", {}) or text(record, column[1], column[2])
                      for record in records)] or list(RECIPES[task].comparison.columns[:1])
    # One column per kind of gold set (a member may have scored a subset of it).
    golds = list(dict.fromkeys(gold_column(alignment) for record in records
                               for alignment in record.get("alignments") or []))
    seeded = any(record.get("seeds", 1) > 1 for record in records)
    header = ["member", *(name for name, _, _ in columns), "updates", "compute minutes",
              "ms/update", "parameters", *golds, *(["seeds"] if seeded else [])]
    rows = [header]
    for record in records:
        scores = record.get("scores", {})
        aer = {gold_column(a): a for a in record.get("alignments") or []}
        rows.append([record["label"], *(text(record, key, digits) or
                                         number(scores.get(key), digits)
                                         for _, key, digits in columns),
                     number(record.get("updates"), 0), number(record.get("compute_minutes"), 1),
                     number(record.get("ms_per_update"), 0),
                     number(record.get("parameters"), 0),
                     *(_aer_cell(aer.get(name)) for name in golds),
                     *([str(record.get("seeds", 1))] if seeded else [])])
    return rows


def _aer_cell(alignment: dict | None) -> str:
    if alignment is None:
        return "-"
    spread = alignment.get("spread")
    if spread is not None and spread.n > 1:
        return spread.text(3)
    return number(alignment.get("aer"), 3)


def paper_rows(table: PaperTable, records: list[dict], task: str) -> list[list[str]]:
    """The paper's table, with our member that matches each row (by `paper_row`) and our
    main score beside it."""
    header_main, key, digits = RECIPES[task].comparison.columns[0]
    ours = {record.get("paper_row"): record for record in records if record.get("paper_row")}
    header = ["paper row", *table.columns, "our member", f"ours: {header_main}"]
    rows = [header]
    for name, values in table.rows:
        record = ours.get(name)
        rows.append([name, *(number(value) for value in values),
                     record["label"] if record else "-",
                     number(record["scores"].get(key), digits) if record else "-"])
    return rows


def paper_tables(paper: str | None) -> tuple[PaperTable, ...]:
    return tables_for(paper)


def markdown_table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines.extend("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows[1:])
    return "\n".join(lines)
