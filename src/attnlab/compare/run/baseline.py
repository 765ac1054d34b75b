"""The statistical aligner beside the attention AER: eflomal on the RWTH sentences plus the
suite's training data, both directions, symmetrised (attnlab.translation.alignment.aligner).
Computed once per suite directory and kept in DIR/aligner.json."""

from __future__ import annotations

import json
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import atomic_output

from .layout import RunOptions

CACHE = "aligner.json"


def aligner_baseline(directory: Path, options: RunOptions, records: list[dict]) -> dict | None:
    """{"label", "aer", "pairs"} for a suite whose members were scored on the RWTH gold (their
    records say so); None otherwise. {"label", "aer": None, "reason"} when the aligner cannot
    run here (eflomal not installed)."""
    from attnlab.translation.alignment import scored_on_rwth

    if not any(map(scored_on_rwth, records)):
        return None
    cached = directory / CACHE
    if cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    result = _run_aligner(directory, records, options)
    if result.get("aer") is not None:
        with atomic_output(cached) as file:
            json.dump(result, file, indent=1)
    return result


def _run_aligner(directory: Path, records: list[dict], options: RunOptions) -> dict:
    from attnlab.recipes import load
    from attnlab.translation.alignment import (
        AlignableRun,
        aligner_aer,
        rwth_gold_for_run,
        scored_on_rwth,
    )
    from attnlab.translation.corpus import read_split

    from .layout import seed_dir

    # A member scored on the RWTH gold gives the data (the same in every member); not simply
    # the first member, which is often the no-attention baseline that has no gold to find.
    scored = next(filter(scored_on_rwth, records))
    run = load(seed_dir(directory, scored["name"], scored.get("seed", 1)))
    assert isinstance(run, AlignableRun)   # it was scored on a gold: it has attention to read
    gold = rwth_gold_for_run(run, options.rwth)
    if gold is None:
        return {"label": "statistical aligner (eflomal)", "aer": None,
                "reason": "the RWTH gold was not found: give --rwth DIR or set ATTNLAB_DATA"}
    pairs = read_split(run.config.data, run.config.data.train)
    try:
        score = aligner_aer(gold, pairs)
    except UserError as error:
        return {"label": "statistical aligner (eflomal)", "aer": None, "reason": str(error)}
    return {"label": "eflomal, symmetrised (statistical aligner)", "aer": score.aer,
            "pairs": score.pairs, "name": score.name}
