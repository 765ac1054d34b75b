"""One member's record over its seeds: its seed runs' records (compare.json) folded into one
that the tables, figures and findings read as before, its numbers the means over the seeds, with
the spread beside them and every seed record kept for the significance tests."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation (0.0 for one value), smallest and largest of n values
    (one per seed), in the values' own unit."""

    mean: float
    sd: float
    low: float
    high: float
    n: int

    def text(self, digits: int) -> str:
        """"24.01 ± 0.85" (mean ± sd) for n > 1, "24.01" for one value."""
        if self.n == 1:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.sd:.{digits}f}"


def spread(values: Sequence[float]) -> Spread:
    """The Spread of values (one per seed); ValueError if there are none or one is not finite."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"spread needs a non-empty list of numbers, got {values!r}.")
    if not np.isfinite(array).all():
        raise ValueError(f"spread needs finite numbers, got {list(values)!r}.")
    sd = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return Spread(mean=float(array.mean()), sd=sd, low=float(array.min()),
                  high=float(array.max()), n=int(array.size))



# Heavy or per-run fields: kept in the record of each seed under "runs", not averaged.
PER_RUN = ("hypotheses", "references", "source_words")


def aggregate(runs: list[dict]) -> dict:
    """runs: one member's finished seed records, in seed order (at least one)."""
    base = {key: value for key, value in runs[0].items() if key not in PER_RUN}
    scores = {key: _mean([run["scores"].get(key) for run in runs]) for key in base["scores"]}
    record = {**base, "scores": scores, "seeds": len(runs), "runs": runs,
              "spread": {key: _spread([run["scores"].get(key) for run in runs])
                         for key in base["scores"]}}
    for key in ("minutes", "compute_minutes"):
        record[key] = _mean([run.get(key) for run in runs])
    updates = _mean([run.get("updates") for run in runs])
    record["updates"] = None if updates is None else round(updates)   # a count, not a score
    timed = [run["ms_per_update"] for run in runs if run.get("ms_per_update")]
    record["ms_per_update"] = statistics.median(timed) if timed else None
    record["curves"] = [run.get("curve") or [] for run in runs]
    if base.get("buckets"):
        record["buckets"] = [{**bucket, "bleu": _mean([_bucket(run, index) for run in runs]),
                              "spread": _spread([_bucket(run, index) for run in runs])}
                             for index, bucket in enumerate(base["buckets"])]
    if base.get("alignments"):
        record["alignments"] = [{**gold, "aer": _mean([_aer(run, gold["name"]) for run in runs]),
                                 "spread": _spread([_aer(run, gold["name"]) for run in runs])}
                                for gold in base["alignments"]]
    record["stopped"] = stop_summary(runs)
    return record


def stop_summary(runs: list[dict]) -> str:
    """Why its seed runs stopped, with their updates and epochs: "max_steps (3 of 3 seeds;
    1,500 updates, 3 epochs each)"."""
    reasons: dict[str, list[dict]] = {}
    for run in runs:
        reasons.setdefault(str(run.get("stopped_by", "?")), []).append(run)
    parts = []
    for reason, group in reasons.items():
        updates = sorted({int(run.get("updates") or 0) for run in group})
        epochs = sorted({int(run.get("epochs") or 0) for run in group})
        span = (f"{updates[0]:,}" if len(updates) == 1 else f"{updates[0]:,}-{updates[-1]:,}")
        ages = (f"{epochs[0]}" if len(epochs) == 1 else f"{epochs[0]}-{epochs[-1]}")
        parts.append(f"{reason} ({len(group)} of {len(runs)} seeds; {span} updates, "
                     f"{ages} epochs)")
    return "; ".join(parts)


def text(record: dict, key: str, digits: int) -> str | None:
    """The score as mean ± sd over the seeds, or None when there is no spread to show."""
    value = (record.get("spread") or {}).get(key)
    return value.text(digits) if isinstance(value, Spread) and value.n > 1 else None


def _bucket(run: dict, index: int) -> float | None:
    buckets = run.get("buckets") or []
    return buckets[index].get("bleu") if index < len(buckets) else None


def _aer(run: dict, name: str) -> float | None:
    return next((gold["aer"] for gold in run.get("alignments") or [] if gold["name"] == name),
                None)


def _finite(values: list) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]


def _mean(values: list) -> float | None:
    numbers = _finite(values)
    return statistics.fmean(numbers) if numbers else None


def _spread(values: list) -> Spread | None:
    numbers = _finite(values)
    return spread(numbers) if numbers else None
