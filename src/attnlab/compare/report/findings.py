"""What the numbers say, in sentences computed from the records (never written by hand): the
ranking, what attention adds, how each member holds up with length, what each costs."""

from __future__ import annotations

import math

from attnlab.recipes import RECIPES

from ..stats.verdicts import same_test_set
from ..suite.definition import Suite

MIN_BUCKET = 10   # sentences: a bucket with fewer says little about a model


def findings(suite: Suite, records: list[dict], baseline: dict | None) -> list[str]:
    if not records:
        return []
    # The sentences this module knows for a task; any other task gets its main score listed.
    read = {"translation": _translation, "lm": _language_models,
            "captioning": _captioning}.get(suite.task, _main_scores)
    lines = read(suite, records)
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


def _translation(suite: Suite, records: list[dict]) -> list[str]:
    # A member trained the other way (a reverse member) translates into another language.
    compared = [r for r in records if not r.get("runs") or same_test_set(r, records[0])]
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
                groups.setdefault(_gold_short_name(alignment["name"]), []).append(
                    (alignment["aer"], record["label"], alignment.get("pairs")))
    lines = []
    for short, scored in groups.items():
        most = max((pairs or 0) for _, _, pairs in scored)
        lines.append(f"AER on {short}, best first: " + ", ".join(
            f"{label} {value:.3f}" + (f" (on {pairs} of {most} pairs)"
                                      if pairs is not None and pairs < most else "")
            for value, label, pairs in sorted(scored)) + ".")
    return lines


def _gold_short_name(name: str) -> str:
    return ("RWTH gold" if name.startswith("RWTH") else
            "the dates gold" if "dates" in name else name.split(";")[0])


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


def _language_models(suite: Suite, records: list[dict]) -> list[str]:
    lines = []
    for record in records:
        lines.append(f"{record['label']}: test perplexity {record['scores']['perplexity']:.2f} "
                     f"after {record['updates']:,} updates in {record['minutes']:.1f} minutes "
                     f"({record.get('parameters', 0):,} parameters).")
    best = min(records, key=lambda r: r["scores"]["perplexity"])
    lines.append(f"Lowest perplexity: {best['label']}.")
    return lines


def _captioning(suite: Suite, records: list[dict]) -> list[str]:
    lines = []
    for record in records:
        scores = record["scores"]
        local = scores.get("localisation")
        where = f", localisation {local:.1f}%" if local is not None else ""
        lines.append(f"{record['label']}: BLEU-4 {scores.get('bleu4', float('nan')):.2f}"
                     f"{where}.")
    return lines


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
              if a["name"].startswith("RWTH")]
    if not scored:
        return ""
    label, best = min(scored, key=lambda item: item[1])
    return (f"On the RWTH gold the best attention AER is {best:.3f} ({label}); the statistical "
            f"aligner reaches {baseline['aer']:.3f} on the same sentences.")
