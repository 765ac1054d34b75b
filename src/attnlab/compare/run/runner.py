"""Running a suite: each member with each seed k an ordinary run directory
`DIR/<member>/seed-<k>`, trained, then scored into its `compare.json`.

A run is finished when its compare.json exists; a run with a `last` checkpoint but no
compare.json was interrupted and is resumed from it (its losses continue); any other run
starts afresh. Before the first run trains, every run already in DIR, finished or
interrupted, is checked against the config it would be trained with now: a different config
is refused (it belongs to another experiment), never kept and never replaced, unless
`--retrain MEMBER` (options.retrain) asks for that member's runs to be trained afresh
(attnlab.compare.run.checks). A process holds a run's lock while it trains and scores it
(attnlab.compare.run.lock): a second process on that run refuses at once, or waits (options.wait).
With `jobs` > 1 the runs train in that many processes at once, one torch thread each
(attnlab.compare.run.jobs).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from attnlab.errors import UserError
from attnlab.files import atomic_output, writing
from attnlab.recipes import RECIPES

from ..suite.definition import Member, Suite
from .asked import record_asked
from .checks import check_layout, check_run, check_suite, member_config
from .jobs import run_parallel
from .layout import RECORD, Job, RunOptions, member_state, read_record, seed_dir
from .lock import run_lock
from .measure import member_scores
from .registration import register_claims
from .timing import training_cost


def run_member(suite: Suite, job: Job, directory: Path, options: RunOptions,
               label: str, log: Callable[[str], None] = print) -> dict:
    """Train (or resume, or with --retrain replace) and score one member with one random
    seed, holding its run's lock; returns its record."""
    check_layout(directory, job.member)
    run_dir = seed_dir(directory, job.member.name, job.seed)
    with run_lock(run_dir, options.wait, log):
        # Again under the lock: another process may have trained it while this one waited.
        check_run(suite, job, directory, options)
        retrain = job.member.name in options.retrain
        if not retrain and member_state(run_dir) == "finished":
            log(f"{label}: finished, kept ({run_dir / RECORD})")
            return cast(dict, read_record(run_dir))  # "finished": the record reads
        return _train_and_score(suite, job, run_dir, directory, options, label, log, retrain)


def _train_and_score(suite: Suite, job: Job, run_dir: Path, directory: Path,
                     options: RunOptions, label: str, log: Callable[[str], None],
                     retrain: bool) -> dict:
    from attnlab.train import run_experiment

    member, seed = job.member, job.seed
    config = member_config(suite, member, options, directory, seed)
    resume = not retrain and member_state(run_dir) == "interrupted"
    if retrain and (run_dir / RECORD).exists():
        # First, so that a retrain stopped half-way is an interrupted run, not a finished one.
        with writing(run_dir / RECORD, "remove"):
            (run_dir / RECORD).unlink()
    task_class = RECIPES[suite.task].task_class
    verb = "retraining" if retrain else "resuming" if resume else "training"
    log(f"{label}: {verb} {run_dir}")
    result = run_experiment(task_class, config, run_dir, resume=resume, overwrite=retrain,
                            progress=options.progress, label=label, log=log)
    if result.stopped_by == "interrupted":
        raise KeyboardInterrupt
    log(f"{label}: scoring")
    started = time.monotonic()
    record = score_member(suite, member, run_dir, options)
    record.update(seed=seed, train_seed=config.train.seed, epochs=result.epochs,
                  stopped_by=result.stopped_by, budget=_budget_text(suite, member, config))
    record["scoring_seconds"] = round(time.monotonic() - started, 1)
    with atomic_output(run_dir / RECORD) as file:
        json.dump(record, file, indent=1)
    return record


def _budget_text(suite: Suite, member: Member, config) -> str:
    train = config.train
    if member.minutes_of is not None:
        return f"{train.max_minutes:.2f} minutes of wall time, as long as {member.minutes_of}"
    if suite.budget is not None and suite.budget.converge:
        return (f"to convergence: patience {train.early_stopping.patience} on "
                f"{train.early_stopping.metric}, at most {train.max_steps:,} updates")
    return f"{train.max_steps:,} updates" if train.max_steps else "the config's own"


def score_member(suite: Suite, member: Member, run_dir: Path, options: RunOptions) -> dict:
    cost = training_cost(run_dir, RECIPES[suite.task].comparison.curve_metric)
    record = {"name": member.name, "label": member.label, "task": suite.task,
              "config": str(member.config), "overrides": suite.overrides_for(member,
                                                                             options.data),
              "paper_row": member.paper_row, "updates": cost.updates,
              "minutes": round(cost.minutes, 3), "ms_per_update": cost.ms_per_update,
              "compute_minutes": cost.compute_minutes, "curve": cost.curve,
              "threads": os.environ.get("OMP_NUM_THREADS")}
    record.update(member_scores(suite.task, run_dir, suite, member, options.rwth,
                                options.progress))
    return record


def suite_jobs(suite: Suite, options: RunOptions, only: str | Sequence[str] | None = None,
               seed: int | None = None) -> list[Job]:
    """The runs to make, seed by seed (every member's seed 1 first, so a stopped suite has
    every member once before any twice)."""
    names = [only] if isinstance(only, str) else list(only or [])
    members = [suite.member(name) for name in names] if names else suite.members
    seeds = options.seeds_of(suite)
    if seed is not None and not 1 <= seed <= seeds:
        raise UserError(f"--seed must be between 1 and the number of seeds, {seeds}; got {seed}")
    chosen = [seed] if seed is not None else range(1, seeds + 1)
    return [Job(member, k) for k in chosen for member in members]


def run_suite(suite: Suite, directory: str | os.PathLike, options: RunOptions,
              only: str | Sequence[str] | None = None, log: Callable[[str], None] = print, *,
              seed: int | None = None, jobs: int = 1) -> list[dict]:
    """Run every member (or those named in `only`) with every seed (or `seed` alone): one at a
    time, or `jobs` at once in processes of their own; the records of those finished."""
    directory = Path(directory)
    work = suite_jobs(suite, options, only, seed)
    names = {job.member.name for job in work}
    check_suite(suite, [m for m in suite.members if m.name in names], directory, options,
                sorted({job.seed for job in work}))
    register_claims(suite, directory, options.seeds_of(suite))   # fixed before any run
    record_asked(directory, options, names)
    if jobs > 1:
        run_parallel(suite, directory, options, work, jobs, log)
        return [cast(dict, read_record(seed_dir(directory, job.member.name, job.seed)))
                for job in work]
    records = []
    for number, job in enumerate(work, start=1):
        label = f"[{number}/{len(work)}] {job.name}"
        records.append(run_member(suite, job, directory, options, label, log))
    return records
