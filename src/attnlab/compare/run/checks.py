"""What a suite checks before its first run trains, so that a mistake in member 8 does not wait
for members 1-7: the `--retrain` names, every member's config, all the data every member reads,
and every run already in DIR (finished or interrupted, each random seed) against the config it
would be trained with now. A run of another config belongs to another experiment: it is refused
in one sentence naming the member, the key and both values, never kept and never replaced, unless
`--retrain MEMBER` asks for it to be replaced.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import ConfigError, UserError
from attnlab.recipes import RECIPES

from ..suite.definition import Member, Suite, data_overrides
from .layout import Job, RunOptions, member_state, read_record, seed_dir


def base_config(suite: Suite, member: Member, options: RunOptions, seed: int = 1):
    """The member's config for random seed k before `minutes_of`: its YAML, the suite's budget
    and overrides and its own, the update budget scaled, train.seed moved by k - 1."""
    try:
        config = load_config(member.config, RECIPES[suite.task].config_class,
                             suite.overrides_for(member, options.data))
    except ConfigError as error:
        raise ConfigError(f"{suite.path} member {member.name}: {error}") from None
    train = config.train
    if options.scale != 1.0 and train.max_steps is not None:
        train.max_steps = max(1, round(train.max_steps * options.scale))
    train.seed += seed - 1
    return config


def member_config(suite: Suite, member: Member, options: RunOptions, directory: Path,
                  seed: int = 1):
    """The member's experiment config for random seed k (base_config), and for `minutes_of`
    the other member's training minutes with the same random seed as the budget."""
    config = base_config(suite, member, options, seed)
    train = config.train
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


def check_suite(suite: Suite, members: list[Member], directory: Path, options: RunOptions,
                seeds: Sequence[int] = (1,)) -> None:
    """Everything that can be checked before the first run trains, for `members` with
    `seeds`: UserError (one sentence) at the first problem, nothing written."""
    check_retrain(suite, members, directory, options, seeds)
    for member in members:
        check_layout(directory, member)
    configs = [base_config(suite, member, options) for member in members]
    check_data(suite, members, configs, options)
    for member in members:
        for seed in seeds:
            check_run(suite, Job(member, seed), directory, options)


def check_run(suite: Suite, job: Job, directory: Path, options: RunOptions) -> None:
    """A run already in the job's directory, finished or interrupted, was trained with the
    config it would be trained with now (unless --retrain replaces it)."""
    member, run_dir = job.member, seed_dir(directory, job.member.name, job.seed)
    if member.name in options.retrain or member_state(run_dir) == "new":
        return
    if member.minutes_of is not None and read_record(
            seed_dir(directory, member.minutes_of, job.seed)) is None:
        return   # its budget is known once its source run has finished: checked then
    check_same_config(run_dir, member_config(suite, member, options, directory, job.seed), job)


def check_same_config(run_dir: Path, config, job: Job) -> None:
    """Refuse a run trained with another config (an edited suite, another --data or --scale)."""
    from attnlab.train import RunDir
    from attnlab.train.identity import first_difference

    # Both sides as the config class reads them, so a default the stored side leaves out
    # (a run of the format before) is no difference.
    stored = _plain(config_from_dict(RunDir(run_dir).read_config(), type(config)))
    difference = first_difference(stored, _plain(config))
    if difference is not None:
        key, old, new = difference
        name = job.member.name
        raise UserError(f"member {name} seed {job.seed} ({run_dir}) holds a run with another "
                        f"config ({key}: {old!r} there, {new!r} now); pass --retrain {name} to "
                        f"replace its runs, or use another --dir")


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


def check_retrain(suite: Suite, members: list[Member], directory: Path, options: RunOptions,
                  seeds: Sequence[int]) -> None:
    """--retrain names members this call trains; a member trained for as long as a retrained
    one (minutes_of) is retrained with it, since its budget changes."""
    names = [member.name for member in members]
    for name in sorted(options.retrain):
        suite.member(name)   # a ConfigError with the close name
        if name not in names:
            raise UserError(f"--retrain {name}: this call trains only {', '.join(names)}; add "
                            f"--only {name} or leave out --only")
    for member in members:
        source = member.minutes_of
        if (source in options.retrain and member.name not in options.retrain
                and any(member_state(seed_dir(directory, member.name, k)) != "new"
                        for k in seeds)):
            raise UserError(f"member {member.name} trains for as long as {source} did, so "
                            f"retraining {source} changes its budget: pass --retrain "
                            f"{member.name} too")


def check_data(suite: Suite, members: list[Member], configs: list, options: RunOptions) -> None:
    """The suite's data folder, then every path each member's config reads its data from (a
    member's own `set` may point elsewhere), all before the first run trains."""
    folder = options.data or suite.data
    if folder is not None and not Path(folder).is_dir():
        raise UserError(_missing_folder(suite, folder, options))
    suite_keys = data_overrides(suite.task, folder) if folder is not None else {}
    for member, config in zip(members, configs, strict=True):
        for key in data_overrides(suite.task, "."):
            value = _dotted(config, key)
            if not isinstance(value, str) or Path(value).exists():
                continue
            make = (f"make it with: {suite.make_data}"
                    if suite.make_data and suite_keys.get(key) == value
                    else "make it first (attnlab data --help lists the commands that do)")
            raise UserError(f"member {member.name} reads its data from {value} ({key}, from "
                            f"{_origin(suite, member, key, suite_keys)}), which does not "
                            f"exist; {make}")
        _check_input_files(suite, member, config)


# Files beside the data that a member's config may read (made by a command of their own).
INPUT_FILES = {"train.guided_alignment.links": "attnlab align --src FILE --tgt FILE --output FILE"}


def _check_input_files(suite: Suite, member: Member, config) -> None:
    for key, command in INPUT_FILES.items():
        value = _dotted(config, key)
        if isinstance(value, str) and not Path(value).is_file():
            make = suite.make_data or command
            raise UserError(f"member {member.name} reads {value} ({key}), which does not "
                            f"exist; make it with: {make}")


def _origin(suite: Suite, member: Member, key: str, suite_keys: dict) -> str:
    """Which part of the suite gave a member's config key its value."""
    if key in member.overrides:
        return f"member {member.name}'s set"
    if key in suite.overrides:
        return "the suite's set"
    return "the suite's data folder" if key in suite_keys else member.config.name


def _missing_folder(suite: Suite, folder: str, options: RunOptions) -> str:
    if options.data:
        made = f"; the suite's own is made with: {suite.make_data}" if suite.make_data else ""
        return f"the data folder {folder} given with --data does not exist{made}"
    make = f"; make it with: {suite.make_data}" if suite.make_data else ""
    return (f"the data folder {folder} of suite {suite.name!r} does not exist{make} (or give "
            f"--data DIR)")


def _dotted(config, key: str):
    """config.data.dir for "data.dir"; None where the config has no such field."""
    value = config
    for part in key.split("."):
        value = getattr(value, part, None)
    return value
