"""What a run's training cost, read back from the files every run writes: `last/meta.json`
(updates, training seconds) and `metrics.jsonl` (ms per update of each logged window, the
validation metrics with the training time they were reached at)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from attnlab.train import RunDir
from attnlab.train.monitor import ELAPSED, METRICS_FILE


@dataclass
class TrainingCost:
    """updates: optimiser steps; minutes: training wall time (validations included), summed
    over resumed sessions; ms_per_update: median over logged windows (validation excluded);
    curve: (updates, value) of every validation of `metric`.

    compute_minutes (updates x ms_per_update) is the run's own cost: unlike `minutes` it leaves
    out time spent stopped, validating, or slowed by a burst of other work on the machine."""

    updates: int
    minutes: float
    ms_per_update: float | None
    curve: list[tuple[float, float]] = field(default_factory=list)

    @property
    def compute_minutes(self) -> float | None:
        if self.ms_per_update is None:
            return None
        return round(self.updates * self.ms_per_update / 60_000, 3)


def training_cost(run_dir: str | Path, metric: str | None) -> TrainingCost:
    run = RunDir(run_dir)
    meta = run.read_meta("last")
    records = _records(run.file(METRICS_FILE))
    windows = [r["ms_per_step"] for r in records
               if r.get("kind") == "train" and _finite(r.get("ms_per_step"))]
    curve = _curve(records, metric)
    return TrainingCost(updates=int(meta.get("step", 0)),
                        minutes=float(meta.get(ELAPSED, 0.0)) / 60,
                        ms_per_update=statistics.median(windows) if windows else None,
                        curve=curve)


def _curve(records: list[dict], metric: str | None) -> list[tuple[float, float]]:
    """(updates, value) per validation step (updates, not minutes: a curve that means the same
    on every machine); for a step validated twice (a resumed run) the later line wins."""
    points: dict[int, tuple[float, float]] = {}
    for record in records:
        if record.get("kind") != "valid" or metric is None:
            continue
        value = record.get(metric)
        if _finite(value):
            points[int(record["step"])] = (float(record["step"]), float(value))
    return [points[step] for step in sorted(points)]


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue   # a line cut by a kill mid-write
        if isinstance(record, dict) and "step" in record:
            records.append(record)
    return records


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and math.isfinite(value)
