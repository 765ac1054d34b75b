"""The checks a suite file's values get as it loads, each a ConfigError of one sentence naming the
file and the key: keys with did-you-mean, whole numbers within their range, and every key of a
claim of `expect:` (its kind, its members, its metric, its margin).

The metrics a claim may name are those its task's records hold (the task's record in
attnlab.recipes says which: Comparison.claim_metrics), so a typo (`metric: blue`) is refused
before anything trains instead of reading "inconclusive" after it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Iterable

from attnlab.errors import ConfigError

from ..stats.claims import DIAGONAL, RELATIONS, Expectation, entry_forms


def did_you_mean(value: object, options: Iterable[str]) -> str:
    """"; did you mean 'bleu'?" when `value` is a string close to one of `options`, else ""."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, sorted(options), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_keys(data: object, allowed: Collection[str], where: str) -> None:
    """ConfigError unless `data` is a mapping whose keys are all `allowed`."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {data!r}")
    for key in data:
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r}{did_you_mean(str(key), allowed)}")


def whole_number(value: object, where: str, least: int = 1, most: int | None = None) -> int:
    """`value` when it is a whole number from `least` to `most`; ConfigError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least or (
            most is not None and value > most):
        wanted = (f"a whole number from {least:,} to {most:,}" if most is not None else
                  "a positive whole number" if least == 1 else
                  f"a whole number of at least {least:,}")
        raise ConfigError(f"{where} must be {wanted}, got {value!r}")
    return value


def text(value: object, where: str) -> str:
    """`value` when it is a string (a title, a sentence, a folder); ConfigError otherwise."""
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {value!r}")
    return value


def edges(value: object, where: str) -> list[float]:
    """Length buckets' edges: at least two numbers, from 0 up, each above the one before (the
    last may be .inf)."""
    numbers = value if isinstance(value, list) else []
    if len(numbers) < 2 or any(isinstance(edge, bool) or not isinstance(edge, (int, float))
                               or math.isnan(edge) for edge in numbers):
        raise ConfigError(f"{where} must be a list of at least two numbers, got {value!r}")
    if numbers[0] < 0 or any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)) or \
            any(math.isinf(edge) for edge in numbers[:-1]):
        raise ConfigError(f"{where} must start at 0 or above and rise edge by edge (only the "
                          f"last may be .inf), got {value!r}")
    return [float(edge) for edge in numbers]


def expectation(entry: object, members: Collection[str], task: str,
                metrics: Collection[str], where: str) -> Expectation:
    """One claim of `expect:` checked key by key: its kind (a key of RELATIONS) and the key
    naming B, the members (or `than: diagonal` on aer), the metric (one of `metrics`, what the
    records of a `task` run hold) and the margin where the kind takes one."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: give {entry_forms()}, got {entry!r}")
    relation = _relation(entry, where)
    kind = RELATIONS[relation]
    keys = {relation, kind.other, "metric", "margin"}
    sides = {other.other for other in RELATIONS.values()}
    for key in entry:
        if key in sides and key not in keys:
            raise ConfigError(f"{where}: a {relation} claim names B with {kind.other!r}, not "
                              f"{key!r} (give {kind.example(relation)})")
        if key not in keys:
            raise ConfigError(f"{where}: a {relation} claim has no key {key!r}"
                              f"{did_you_mean(str(key), keys)} (give {kind.example(relation)})")
    for key in (kind.other, "metric"):
        if key not in entry:
            raise ConfigError(f"{where}: a {relation} claim needs {key!r} (give "
                              f"{kind.example(relation)})")
    metric = entry["metric"]
    if not isinstance(metric, str) or metric not in metrics:
        raise ConfigError(f"{where}: metric {metric!r} is none that {task} runs are scored on "
                          f"({', '.join(metrics)}){did_you_mean(metric, metrics)}")
    a, b = (_member(entry[key], members, f"{where}: {key}") for key in (relation, kind.other))
    if a == DIAGONAL or (b == DIAGONAL and metric != "aer"):
        raise ConfigError(f"{where}: the diagonal aligner can only be the B side of an aer "
                          f"claim")
    return Expectation(relation, a, b, metric, _margin(entry, relation, where))


def _relation(entry: dict, where: str) -> str:
    """The one key of RELATIONS the entry has; ConfigError naming the close one otherwise."""
    kinds = [key for key in entry if key in RELATIONS]
    if len(kinds) == 1:
        return kinds[0]
    if kinds:
        raise ConfigError(f"{where}: a claim is of one kind, and this one names "
                          f"{' and '.join(kinds)}")
    hint = next((found for key in entry if (found := did_you_mean(str(key), RELATIONS))), "")
    raise ConfigError(f"{where}: no kind of claim ({', '.join(RELATIONS)}) in {entry!r}{hint}; "
                      f"give {entry_forms()}")


def _member(name: object, members: Collection[str], where: str) -> str:
    """A member's name, or `diagonal`; ConfigError naming the members otherwise."""
    names = sorted({*members, DIAGONAL})
    if not isinstance(name, str) or name not in names:
        raise ConfigError(f"{where}: no member {name!r} (members: {', '.join(names)})"
                          f"{did_you_mean(name, names)}")
    return name


def _margin(entry: dict, relation: str, where: str) -> float | None:
    """The claim's margin: refused on a kind that takes none, required where the kind needs it,
    a positive finite number in the metric's unit."""
    takes = RELATIONS[relation].margin
    margin = entry.get("margin")
    if "margin" in entry and takes == "none":
        raise ConfigError(f"{where}: a {relation} claim takes no margin (give "
                          f"{RELATIONS[relation].example(relation)})")
    if margin is None:
        if takes == "required":
            raise ConfigError(f"{where}: a {relation} claim needs a margin (give "
                              f"{RELATIONS[relation].example(relation)})")
        return None
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or \
            not 0 < margin < math.inf:
        raise ConfigError(f"{where}: margin is a positive number, in the metric's unit, of a "
                          f"claim that takes one, got {margin!r}")
    return float(margin)
