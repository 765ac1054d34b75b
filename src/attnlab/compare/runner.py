"""Running a suite: each member with each seed k an ordinary run directory
`DIR/<member>/seed-<k>`, trained, then scored into its `compare.json`.

A run is finished when its compare.json exists; a run with a `last` checkpoint but no
compare.json was interrupted and is resumed from it (its losses continue); any other run
starts afresh. Before a run trains, its config is checked against a run already in its
directory: a different config is refused (it belongs to another experiment), never replaced.
With `jobs` > 1 the runs train in that many processes at once, one torch thread each
(attnlab.compare.jobs).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import ConfigError, UserError
from attnlab.files import atomic_output
from attnlab.recipes import RECIPES

from .jobs import run_parallel
from .layout import RECORD, Job, RunOptions, member_state, read_record, seed_dir
from .measure import member_scores
from .suite import Member, Suite
from .timing import training_cost


def member_config(suite: Suite, member: Member, options: RunOptions, directory: Path,
                  seed: int = 1):
    """The member's experiment config for seed k: its YAML, the suite's budget and overrides
    and its own, the update budget scaled, train.seed moved by k - 1, and for `minutes_of`
    the other member's training minutes with the same seed as the budget."""
    try:
        config = load_config(member.config, RECIPES[suite.task].config_class,
                             suite.overrides_for(member, options.data))
    except ConfigError as error:
        raise ConfigError(f"{suite.path} member {member.name}: {error}") from None
    train = config.train
    if options.scale != 1.0 and train.max_steps is not None:
        train.max_steps = max(1, round(train.max_steps * options.scale))
    train.seed += seed - 1
    if member.minutes_of is not None:
        source = read_record(seed_dir(directory, member.minutes_of, seed))
        if source is None:
            raise UserError(f"member {member.name} trains for as long as {member.minutes_of} "
                            f"did with seed {seed}, which has not finished: run it first")
        train.max_minutes, train.max_steps, train.max_epochs = source["minutes"], None, None
    elif train.max_minutes is not None:
        raise ConfigError(f"{suite.path} member {member.name}: train.max_minutes is a wall-time "
                          f"budget, which means something else on every machine; give the "
                          f"suite a budget ({{updates: N}} or {{converge: ...}}) instead")
    return config


def check_same_config(run_dir: Path, config) -> None:
    """Refuse to resume a run trained with another config (an edited suite, another --data)."""
    from attnlab.train import RunDir
    from attnlab.train.identity import first_difference

    # Both sides as the config class reads them, so a default the stored side leaves out
    # (a run of the format before) is no difference.
    stored = _plain(config_from_dict(RunDir(run_dir).read_config(), type(config)))
    difference = first_difference(stored, _plain(config))
    if difference is not None:
        key, old, new = difference
        raise UserError(f"{run_dir} holds a run with another config ({key}: {old!r} there, "
                        f"{new!r} now); move it away or use another --dir")


def _plain(config) -> dict:
    """The config as JSON would give it back (tuples as lists), minutes rounded to the
    millisecond as a budget copied from another member's record is."""
    data = json.loads(json.dumps(config_to_dict(config)))
    minutes = data.get("train", {}).get("max_minutes")
    if isinstance(minutes, float):
        data["train"]["max_minutes"] = round(minutes, 5)
    return data


def check_layout(directory: Path, member: Member) -> None:
    """A member folder that is itself a run comes from before seeds: say where it belongs."""
    old = Path(directory) / member.name
    if (old / "config.json").is_file():
        raise UserError(f"{old} holds a run of the one-seed layout; move its files into "
                        f"{seed_dir(directory, member.name, 1)} (or use another --dir)")


def run_member(suite: Suite, job: Job, directory: Path, options: RunOptions,
               label: str, log: Callable[[str], None] = print) -> dict:
    """Train (or resume) and score one member with one seed; returns its record."""
    from attnlab.train import run_experiment

    member, seed = job.member, job.seed
    check_layout(directory, member)
    run_dir = seed_dir(directory, member.name, seed)
    state = member_state(run_dir)
    if state == "finished":
        log(f"{label}: finished, kept ({run_dir / RECORD})")
        return cast(dict, read_record(run_dir))  # "finished": the record reads
    config = member_config(suite, member, options, directory, seed)
    if state == "interrupted":
        check_same_config(run_dir, config)
    task_class = RECIPES[suite.task].task_class
    log(f"{label}: {'resuming' if state == 'interrupted' else 'training'} {run_dir}")
    result = run_experiment(task_class, config, run_dir, resume=state == "interrupted",
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
    record.update(member_scores(suite.task, run_dir, suite, options.rwth, options.progress))
    return record


def suite_jobs(suite: Suite, options: RunOptions, only: str | None = None,
               seed: int | None = None) -> list[Job]:
    """The runs to make, seed by seed (every member's seed 1 first, so a stopped suite has
    every member once before any twice)."""
    members = [suite.member(only)] if only else suite.members
    seeds = options.seeds_of(suite)
    if seed is not None and not 1 <= seed <= seeds:
        raise UserError(f"--seed must be between 1 and the number of seeds, {seeds}; got {seed}")
    chosen = [seed] if seed is not None else range(1, seeds + 1)
    return [Job(member, k) for k in chosen for member in members]


def run_suite(suite: Suite, directory: str | os.PathLike, options: RunOptions,
              only: str | None = None, log: Callable[[str], None] = print, *,
              seed: int | None = None, jobs: int = 1) -> list[dict]:
    """Run every member (or `only` one) with every seed (or `seed` alone): one at a time, or
    `jobs` at once in processes of their own; the records of those finished."""
    directory = Path(directory)
    work = suite_jobs(suite, options, only, seed)
    names = {job.member.name for job in work}
    check_suite(suite, [m for m in suite.members if m.name in names], directory, options)
    if jobs > 1:
        run_parallel(suite, directory, options, work, jobs, log)
        return [cast(dict, read_record(seed_dir(directory, job.member.name, job.seed)))
                for job in work]
    records = []
    for number, job in enumerate(work, start=1):
        label = f"[{number}/{len(work)}] {job.name}"
        records.append(run_member(suite, job, directory, options, label, log))
    return records


def check_suite(suite: Suite, members: list[Member], directory: Path,
                options: RunOptions) -> None:
    """Everything that can be checked before the first member trains: the data folder, and
    every member's config (a mistake in member 8 should not wait for members 1-7)."""
    folder = options.data or suite.data
    if folder is not None and not Path(folder).is_dir():
        make = f"; make it with: {suite.make_data}" if suite.make_data else ""
        raise UserError(f"the data folder {folder} of suite {suite.name!r} does not exist"
                        f"{make} (or give --data DIR)")
    for member in members:
        check_layout(directory, member)
        if member.minutes_of is None or read_record(seed_dir(directory, member.minutes_of, 1)):
            member_config(suite, member, options, directory)
