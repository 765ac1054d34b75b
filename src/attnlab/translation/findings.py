"""What a translation suite's numbers say, in sentences computed from its members' compare
records (never written by hand): the ranking by BLEU, what attention adds, how each member
holds up with length, each gold set's AER ranking. `attnlab compare`'s report asks for them
through the task's record (attnlab.recipes: Comparison.findings)."""

from __future__ import annotations

import math

from attnlab.eval.buckets import MIN_BUCKET


def findings(records: list[dict]) -> list[str]:
    """The report's sentences on a translation suite's members (their compare records)."""
    # A member trained the other way (a reverse member) translates into another language.
    compared = [r for r in records if not r.get("runs") or _same_test_set(r, records[0])]
    ranked = sorted(compared, key=lambda r: -r["scores"]["bleu"])
    lines = ["BLEU, best first: " + ", ".join(f"{r['label']} {r['scores']['bleu']:.2f}"
                                              for r in ranked) + "."]
    other_way = [r for r in records if r not in compared]
    if other_way:
        lines.append("Trained the other way, so not ranked with the others (another target "
                     "language): " + ", ".join(f"{r['label']} BLEU {r['scores']['bleu']:.2f}"
                                               for r in other_way) + ".")
    plain = [r for r in compared if not r.get("attention_row")]
    attending = [r for r in compared if r.get("attention_row")]
    if plain and attending:
        best = max(attending, key=lambda r: r["scores"]["bleu"])
        gain = best["scores"]["bleu"] - plain[0]["scores"]["bleu"]
        chosen = (f", the best of {len(attending)} attention members (a figure chosen as the "
                  f"largest, so larger than a typical member's; each member's own difference "
                  f"and its test are in the pairwise results)" if len(attending) > 1 else "")
        lines.append(f"Attention adds {gain:+.2f} BLEU: {best['label']} against "
                     f"{plain[0]['label']}{chosen}.")
    lines.extend(_length_line(record) for record in records)
    lines.extend(_aer_lines(records))
    return lines


def _aer_lines(records: list[dict]) -> list[str]:
    """Per gold set, the members' AER best first (the attention as an aligner). A member scored
    on fewer of the gold's pairs (a sentence over its max_len left out, which renames the gold
    set) is ranked with the others and says how many pairs it had."""
    groups: dict[str, list[tuple[float, str, int | None]]] = {}
    for record in records:
        for alignment in record.get("alignments") or []:
            if alignment.get("aer") is not None:
                groups.setdefault(alignment["gold"]["title"], []).append(
                    (alignment["aer"], record["label"], alignment.get("pairs")))
    lines = []
    for short, scored in groups.items():
        most = max((pairs or 0) for _, _, pairs in scored)
        lines.append(f"AER on {short}, best first: " + ", ".join(
            f"{label} {value:.3f}" + (f" (on {pairs} of {most} pairs)"
                                      if pairs is not None and pairs < most else "")
            for value, label, pairs in sorted(scored)) + ".")
    return lines


def _length_line(record: dict) -> str:
    """BLEU on the shortest and on the longest bucket with at least MIN_BUCKET sentences."""
    buckets = [b for b in record.get("buckets", []) if b["count"] >= MIN_BUCKET
               and b["bleu"] is not None and math.isfinite(b["bleu"])]
    if len(buckets) < 2:
        return ""
    first, last = buckets[0], buckets[-1]
    change = last["bleu"] - first["bleu"]
    return (f"{record['label']}: BLEU {first['bleu']:.1f} on {first['label']} words "
            f"({first['count']} sentences), {last['bleu']:.1f} on {last['label']} words "
            f"({last['count']}): {change:+.1f}.")


def _same_test_set(a: dict, b: dict) -> bool:
    """A member trained the other way (a reverse member) is scored on other references."""
    return a["runs"][0].get("references") == b["runs"][0].get("references")
