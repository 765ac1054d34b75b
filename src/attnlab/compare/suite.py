"""A comparison suite: a named list of members, each an experiment config plus overrides, all
trained on the same data, vocabulary settings, seed and number of updates.

A suite is a small YAML file (the shipped ones are package data, attnlab/configs/compare/;
`attnlab config list` names them):

    name: bottleneck
    task: translation            # translation | lm | captioning
    title: The fixed-length vector is a bottleneck (Bahdanau et al. 2015, Fig. 2)
    claim: Without attention BLEU falls with sentence length; with attention it does not.
    paper: bahdanau2015          # key of attnlab.compare.papers.PAPERS (optional)
    data: data/multi30k-long     # data.dir (translation) of every member; --data replaces it
    make_data: attnlab data multi30k-long --from data/multi30k --dest data/multi30k-long
    set:                         # overrides for every member (dotted keys)
      train.max_steps: 3000
    evaluate: {beam: 5, length_edges: [0, 10, 20, 30, 40, 50, 60]}
    members:
      - name: no-attention       # also the run directory's name under --dir
        label: no attention (Cho et al. 2014)
        config: ../multi30k-seq2seq.yaml     # relative to this file
        set: {model.decoder.hidden_dim: 256}
      - name: lstm-equal-time
        config: ../lm-multi30k-lstm.yaml
        minutes_of: lstmn        # train for as long as member `lstmn` trained (equal wall time)

Paths in `config:` are relative to the suite file; `data:` and the data paths of the configs
are relative to the working directory, as for `attnlab train`.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from attnlab import configs
from attnlab.errors import ConfigError
from attnlab.recipes import RECIPES

# The shipped suites: package data, found from a checkout or an installed wheel alike.
SHIPPED = configs.SUITE_FOLDER
SUITE_KEYS = {"name", "task", "title", "claim", "paper", "data", "make_data", "set", "evaluate",
              "members", "example", "scale_note"}
MEMBER_KEYS = {"name", "label", "config", "set", "minutes_of", "paper_row"}
EVALUATE_KEYS = {"beam", "length_edges", "limit"}


@dataclass
class Member:
    """One run of a suite: `config` with `overrides` (dotted key -> value)."""

    name: str
    label: str
    config: Path
    overrides: dict = field(default_factory=dict)
    minutes_of: str | None = None   # equal wall time: the member whose training minutes to use
    paper_row: str | None = None    # the row of the suite's paper table this member matches


@dataclass
class Suite:
    name: str
    task: str
    title: str
    path: Path
    members: list[Member]
    claim: str = ""
    paper: str | None = None
    data: str | None = None
    make_data: str | None = None
    overrides: dict = field(default_factory=dict)
    evaluate: dict = field(default_factory=dict)
    example: str | None = None      # the sentence whose heatmap every member draws
    scale_note: str = ""

    @property
    def argument(self) -> str:
        """How `attnlab compare` names this suite: a shipped one by its name, else its file."""
        return self.name if self.path.parent.resolve() == SHIPPED else str(self.path)

    def member(self, name: str) -> Member:
        for member in self.members:
            if member.name == name:
                return member
        names = [member.name for member in self.members]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"suite {self.name!r} has no member {name!r} (members: "
                          f"{', '.join(names)}){hint}")

    def overrides_for(self, member: Member, data: str | None = None) -> list[str]:
        """`key=value` overrides for `member`: the data folder, the suite's, then its own."""
        values: dict = {}
        folder = data or self.data
        if folder is not None:
            values.update(data_overrides(self.task, folder))
        values.update(self.overrides)
        values.update(member.overrides)
        return [f"{key}={json.dumps(value)}" for key, value in values.items()]


def data_overrides(task: str, folder: str) -> dict:
    """The config keys that point a task at a data folder (its record says which)."""
    return RECIPES[task].comparison.data_keys(folder)


def shipped_suites() -> list[str]:
    """The names of the shipped suites."""
    return configs.suite_names()


def find_suite(name_or_path: str) -> Path:
    """A suite file: a path to a YAML file, or the name of a shipped suite."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or os.sep in name_or_path:
        if not path.is_file():
            raise ConfigError(f"suite file not found: {path}")
        return path
    names = shipped_suites()
    if name_or_path in names:
        return SHIPPED / f"{name_or_path}.yaml"
    close = difflib.get_close_matches(name_or_path, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"no suite named {name_or_path!r} (suites: {', '.join(names) or 'none'})"
                      f"{hint}; or give a suite YAML file")


def load_suite(name_or_path: str) -> Suite:
    """Read and check a suite (see the module docstring)."""
    path = find_suite(name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not a valid YAML file ({str(error).splitlines()[0]})") \
            from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a suite is a mapping with name, task and members")
    _check_keys(data, SUITE_KEYS, str(path))
    for key in ("name", "task", "members"):
        if key not in data:
            raise ConfigError(f"{path}: missing key {key!r}")
    if data["task"] not in RECIPES:
        raise ConfigError(f"{path}: task must be one of {', '.join(RECIPES)}, got "
                          f"{data['task']!r}")
    _check_keys(data.get("evaluate") or {}, EVALUATE_KEYS, f"{path}: evaluate")
    members = _members(data["members"], path)
    return Suite(name=str(data["name"]), task=data["task"], title=str(data.get("title", "")),
                 path=path, members=members, claim=str(data.get("claim", "")),
                 paper=data.get("paper"), data=data.get("data"),
                 make_data=data.get("make_data"), overrides=dict(data.get("set") or {}),
                 evaluate=dict(data.get("evaluate") or {}), example=data.get("example"),
                 scale_note=str(data.get("scale_note", "")))


def _members(entries, path: Path) -> list[Member]:
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: members must be a non-empty list")
    members: list[Member] = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: member {number}"
        if not isinstance(entry, dict) or "name" not in entry or "config" not in entry:
            raise ConfigError(f"{where}: each member needs a name and a config")
        _check_keys(entry, MEMBER_KEYS, where)
        name = str(entry["name"])
        if not name or "/" in name or name.startswith(".") or name in {m.name for m in members}:
            raise ConfigError(f"{where}: name {name!r} must be a unique plain folder name")
        config = (path.parent / entry["config"]).resolve()
        if not config.is_file():
            raise ConfigError(f"{where} ({name}): config not found: {config}")
        minutes_of = entry.get("minutes_of")
        if minutes_of is not None and minutes_of not in {m.name for m in members}:
            raise ConfigError(f"{where} ({name}): minutes_of must name an earlier member, got "
                              f"{minutes_of!r}")
        members.append(Member(name, str(entry.get("label", name)), config,
                              dict(entry.get("set") or {}), minutes_of, entry.get("paper_row")))
    return members


def _check_keys(data: dict, allowed: set[str], where: str) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping")
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint}")
