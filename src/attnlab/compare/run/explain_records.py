"""`attnlab compare SUITE --dir DIR --explain`: each finished run's explanation record,
DIR/<member>/seed-<k>/explain.json (extractions' AER, the faithfulness tests, uniform
attention: attnlab.recipes' `comparison.explain`; a language model's: its self-attention's
faithfulness tests and uniform attention), for the report's "Is attention an explanation?"
section (attnlab.compare.report.explanations).

Nothing trains. A record is kept while the suite's `explain:` block is what made it, and made
again otherwise; it is written whole or not at all, under the run's lock, so an interrupted
`--explain` resumes at the run it stopped in, and two `--explain` commands on one suite share
its runs (each leaves a run the other holds to it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import atomic_output
from attnlab.recipes import RECIPES

from ..suite.definition import Member, Suite
from .layout import RunOptions, read_record, seed_dir
from .lock import Busy, run_lock

EXPLAIN_RECORD = "explain.json"


def explained_seeds(suite: Suite, options: RunOptions) -> range:
    """The seeds whose runs are explained: the first `explain.seeds`, else every seed."""
    seeds = options.seeds_of(suite)
    return range(1, min(seeds, suite.explain.get("seeds", seeds)) + 1)


def reverse_run(suite: Suite, directory: Path, member: Member, seed: int) -> Path | None:
    """The finished run of the same seed trained the other way beside `member` (a member whose
    `reverse_of` names it), whose attention the record reads with member's; None without."""
    partner = suite.reverse_member(member.name)
    if partner is None:
        return None
    run_dir = seed_dir(directory, partner.name, seed)
    return run_dir if read_record(run_dir) is not None else None


def asked(suite: Suite, directory: Path, member: Member, seed: int) -> dict:
    """What the recipe is asked to compute for one run: the explain block less its `seeds`,
    its reverse member once that run is finished (so the record is made again then), and the
    version of the task's explanation code (a record older code made is made again)."""
    block = {key: value for key, value in suite.explain.items() if key != "seeds"}
    block["version"] = RECIPES[suite.task].comparison.explain_version
    reverse = reverse_run(suite, directory, member, seed)
    if reverse is not None:
        block["reverse"] = reverse.parent.name
    return block


def read_explanation(run_dir: Path, expected: dict) -> dict | None:
    """The run's explanation record when it was made as `expected` (asked()), else None."""
    path = run_dir / EXPLAIN_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None   # cut short: made again
    return record if record.get("asked") == expected else None


def explain_suite(suite: Suite, directory: str | Path, options: RunOptions,
                  log: Callable[[str], None] = print) -> int:
    """Make the explanation record of every finished run (of the explained seeds) that lacks
    one; returns how many runs are explained. Unfinished runs are named and left for later."""
    explain = RECIPES[suite.task].comparison.explain
    if explain is None:
        raise UserError(f"--explain: suite {suite.name!r} is a {suite.task} suite, and only "
                        f"translation and language-model runs have explanation records")
    directory = Path(directory)
    every = [(member, seed) for seed in explained_seeds(suite, options)
             for member in suite.members]
    # the finished runs only: "[3/4]" counts what this command will explain or keep
    jobs = [(member, seed) for member, seed in every
            if read_record(seed_dir(directory, member.name, seed)) is not None]
    waiting = [f"{member.name} seed {seed}" for member, seed in every
               if (member, seed) not in jobs]
    held: list[str] = []
    done = 0
    for number, (member, seed) in enumerate(jobs, start=1):
        run_dir = seed_dir(directory, member.name, seed)
        label = f"[{number}/{len(jobs)}] {member.name} seed {seed}"
        expected = asked(suite, directory, member, seed)
        if read_explanation(run_dir, expected) is not None:
            log(f"{label}: explained, kept ({run_dir / EXPLAIN_RECORD})")
            done += 1
            continue
        try:
            with run_lock(run_dir, options.wait, log):
                started = time.monotonic()
                log(f"{label}: explaining")
                record = explain(run_dir, expected, suite.evaluate, options.rwth,
                                 options.progress,
                                 reverse=reverse_run(suite, directory, member, seed))
                record["asked"] = expected
                record["seconds"] = round(time.monotonic() - started, 1)
                with atomic_output(run_dir / EXPLAIN_RECORD) as file:
                    json.dump(record, file)
        except Busy:
            # Another --explain has it (two share a suite's runs), or it is being retrained.
            held.append(f"{member.name} seed {seed}")
            log(f"{label}: another process holds it; left to that one")
            continue
        log(f"{label}: explained in {record['seconds'] / 60:.1f} minutes")
        done += 1
    if waiting:
        log(f"not finished training, so not explained: {', '.join(waiting)}")
    if held:
        log(f"held by another process, so not explained here: {', '.join(held)}")
    return done
