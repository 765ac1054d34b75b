"""Running a suite: each member an ordinary run directory `DIR/<member>`, trained, then scored
into `DIR/<member>/compare.json`.

A member is finished when its compare.json exists; a member with a `last` checkpoint but no
compare.json was interrupted and is resumed from it (its losses continue); any other member
starts afresh. Before a member trains, its config is checked against a run already in its
directory: a different config is refused (it belongs to another experiment), never replaced.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import ConfigError, UserError
from attnlab.files import atomic_output
from attnlab.recipes import RECIPES

from .measure import member_scores
from .suite import Member, Suite
from .timing import training_cost

RECORD = "compare.json"


@dataclass
class RunOptions:
    """data: the data folder for every member (default the suite's); scale: multiply every
    update budget (e.g. 4 on a GPU); rwth: folder of the RWTH gold alignments; progress: bars
    on a terminal while members train and are scored."""

    data: str | None = None
    scale: float = 1.0
    rwth: str | os.PathLike | None = None
    progress: bool = True


def member_config(suite: Suite, member: Member, options: RunOptions, directory: Path):
    """The member's experiment config: its YAML, the suite's and its own overrides, the update
    budget scaled, and for `minutes_of` the other member's training minutes as the budget."""
    try:
        config = load_config(member.config, RECIPES[suite.task].config_class,
                             suite.overrides_for(member, options.data))
    except ConfigError as error:
        raise ConfigError(f"{suite.path} member {member.name}: {error}") from None
    train = config.train
    if options.scale != 1.0 and train.max_steps is not None:
        train.max_steps = max(1, round(train.max_steps * options.scale))
    if member.minutes_of is not None:
        source = read_record(directory / member.minutes_of)
        if source is None:
            raise UserError(f"member {member.name} trains for as long as {member.minutes_of} "
                            f"did, which has not finished: run it first")
        train.max_minutes, train.max_steps, train.max_epochs = source["minutes"], None, None
    return config


def read_record(run_dir: Path) -> dict | None:
    path = run_dir / RECORD
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None   # a record cut short is no record: the member is scored again


def member_state(run_dir: Path) -> str:
    """'finished', 'interrupted' (a last checkpoint, no record) or 'new'."""
    from attnlab.train import RunDir

    if read_record(run_dir) is not None:
        return "finished"
    return "interrupted" if RunDir(run_dir).has_checkpoint("last") else "new"


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


def run_member(suite: Suite, member: Member, directory: Path, options: RunOptions,
               label: str, log: Callable[[str], None] = print) -> dict:
    """Train (or resume) and score one member; returns its record."""
    from attnlab.train import run_experiment

    run_dir = directory / member.name
    state = member_state(run_dir)
    if state == "finished":
        log(f"{label}: finished, kept ({run_dir / RECORD})")
        return cast(dict, read_record(run_dir))  # "finished": the record reads
    config = member_config(suite, member, options, directory)
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
    record["scoring_seconds"] = round(time.monotonic() - started, 1)
    with atomic_output(run_dir / RECORD) as file:
        json.dump(record, file, indent=1)
    return record


def score_member(suite: Suite, member: Member, run_dir: Path, options: RunOptions) -> dict:
    cost = training_cost(run_dir, RECIPES[suite.task].comparison.curve_metric)
    record = {"name": member.name, "label": member.label, "task": suite.task,
              "config": str(member.config), "overrides": suite.overrides_for(member,
                                                                             options.data),
              "paper_row": member.paper_row, "updates": cost.updates,
              "minutes": round(cost.minutes, 3), "ms_per_update": cost.ms_per_update,
              "curve": cost.curve, "threads": os.environ.get("OMP_NUM_THREADS")}
    record.update(member_scores(suite.task, run_dir, suite, options.rwth, options.progress))
    return record


def run_suite(suite: Suite, directory: str | os.PathLike, options: RunOptions,
              only: str | None = None, log: Callable[[str], None] = print) -> list[dict]:
    """Run every member (or `only` one) in order; the records of those finished."""
    directory = Path(directory)
    members = [suite.member(only)] if only else suite.members
    check_suite(suite, members, directory, options)
    records = []
    for number, member in enumerate(members, start=1):
        label = f"[{number}/{len(members)}] {member.name}"
        records.append(run_member(suite, member, directory, options, label, log))
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
        if member.minutes_of is None or read_record(directory / member.minutes_of):
            member_config(suite, member, options, directory)
