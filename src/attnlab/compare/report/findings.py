"""What the numbers say, in sentences computed from the records (never written by hand): the
ranking, what attention adds, how each member holds up with length, what each costs."""

from __future__ import annotations

from attnlab.recipes import RECIPES

from ..suite.definition import Suite


def findings(suite: Suite, records: list[dict], baseline: dict | None) -> list[str]:
    if not records:
        return []
    # The task's own sentences (its record's `findings`), else its main score listed.
    own = RECIPES[suite.task].comparison.findings
    lines = own(records) if own is not None else _main_scores(suite, records)
    lines.append(_cost(records))
    if baseline and baseline.get("aer") is not None:
        lines.append(_alignment(records, baseline))
    elif baseline:
        lines.append(f"No aligner baseline: {baseline.get('reason')}")
    return [line for line in lines if line]


def _main_scores(suite: Suite, records: list[dict]) -> list[str]:
    header, key, digits = RECIPES[suite.task].comparison.columns[0]
    return [f"{header}: " + ", ".join(f"{r['label']} {r['scores'][key]:.{digits}f}"
                                      for r in records) + "."]


def _cost(records: list[dict]) -> str:
    timed = [r for r in records if r.get("ms_per_update")]
    if len(timed) < 2:
        return ""
    cheapest = min(timed, key=lambda r: r["ms_per_update"])
    parts = [f"{r['label']} {r['ms_per_update'] / cheapest['ms_per_update']:.2f}x"
             for r in timed]
    return (f"Cost per update relative to the cheapest ({cheapest['label']}, "
            f"{cheapest['ms_per_update']:.0f} ms): " + ", ".join(parts) + ".")


def _alignment(records: list[dict], baseline: dict) -> str:
    scored = [(r["label"], a["aer"]) for r in records for a in r.get("alignments") or []
              if a["gold"]["kind"] == "rwth"]
    if not scored:
        return ""
    label, best = min(scored, key=lambda item: item[1])
    return (f"On the RWTH gold the best attention AER is {best:.3f} ({label}); the statistical "
            f"aligner reaches {baseline['aer']:.3f} on the same sentences.")
