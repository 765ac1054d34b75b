"""A comparison suite: a named list of members, each an experiment config plus overrides, all
trained on the same data, vocabulary settings and budget, each with the same N seeds.

A suite is a small YAML file (the shipped ones are package data, attnlab/configs/compare/;
`attnlab config list` names them):

    name: bottleneck
    task: translation            # translation | lm | captioning
    title: The fixed-length vector is a bottleneck (Bahdanau et al. 2015, Fig. 2)
    claim: Without attention BLEU falls with sentence length; with attention it does not.
    paper: bahdanau2015          # key of attnlab.compare.report.papers.PAPERS (optional)
    data: data/multi30k-long     # data.dir (translation) of every member; --data replaces it
    make_data: attnlab data multi30k-long --from data/multi30k --dest data/multi30k-long
    seeds: 3                     # each member trained with seeds 1..3 (--seeds replaces it)
    budget: {updates: 3000}      # or {converge: {patience: 5, max_updates: 20000}}
    set:                         # overrides for every member (dotted keys)
      train.validate_every: 500
    evaluate: {beam: 5, length_edges: [0, 10, 20, 30, 40, 50, 60]}
    members:
      - name: no-attention       # also the run directory's name under --dir
        label: no attention (Cho et al. 2014)
        config: ../multi30k-seq2seq.yaml     # relative to this file
        set: {model.decoder.hidden_dim: 256}
      - name: lstm-equal-time
        config: ../lm-multi30k-lstm.yaml
        minutes_of: lstmn        # train for as long as member `lstmn` trained (equal wall time)
      - name: luong-general-en-de
        config: ../multi30k-luong-general.yaml
        set: {data.src_lang: en, data.tgt_lang: de}
        reverse_of: luong-general   # --explain reads the two directions' attention together
        example: A man plays guitar .   # its own example (default: the suite's)
    expect:                      # what the claim predicts, pair by pair: the verdict's rule
      - {better: bahdanau, than: no-attention, metric: bleu}
      - {matches: local-p, as: luong-general, metric: bleu}
    explain: {pairs: 100, seeds: 3}   # what --explain computes per run (attnlab.recipes)

A budget is a number of updates or training to convergence (early stopping on the validation
metric with a patience, under a maximum of updates), never wall time: a result means the same
on every machine. Only a member with `minutes_of` trains for wall time, and the report says so.

Paths in `config:` are relative to the suite file; `data:` and the data paths of the configs
are relative to the working directory, as for `attnlab train`. In a string value of `set:`,
`{data}` stands for the suite's data folder (`--data` when given), so a file made beside the data
follows it: `train.guided_alignment: {links: "{data}/train.de-en.links"}`.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from attnlab import configs
from attnlab.errors import ConfigError
from attnlab.explain.methods import METHODS
from attnlab.recipes import RECIPES

from ..stats.claims import Expectation, entry_forms
from . import checks
from .checks import check_keys, whole_number

# The shipped suites: package data, found from a checkout or an installed wheel alike.
SHIPPED = configs.SUITE_FOLDER
SUITE_KEYS = {"name", "task", "title", "claim", "paper", "data", "make_data", "set", "evaluate",
              "members", "example", "scale_note", "seeds", "budget", "expect", "explain"}
MEMBER_KEYS = {"name", "label", "config", "set", "minutes_of", "paper_row", "reverse_of",
               "example"}
EVALUATE_KEYS = {"beam", "length_edges", "limit"}
# `attnlab compare SUITE --explain`: how much each run's explanation record computes (pairs of
# the gold, test sentences, adversarial searches, integrated gradients' points, the first seeds)
# and which attributions (methods: a list; on long sentences erasure and integrated gradients
# cost 20 times what gradient x input does)
EXPLAIN_KEYS = {"pairs", "sentences", "adversarial", "steps", "seeds", "methods"}
# The ranges of a suite's whole numbers, past which a value is a slip of the keyboard rather than
# a plan. Seeds: each trains every member once more; updates: far past the largest shipped
# budget (12,000); patience: validations without improvement; beam: as `attnlab translate
# --beam`.
MAX_SEEDS = 100
MAX_UPDATES = 10_000_000
MAX_PATIENCE = 1_000
MAX_BEAM = 1_000
# explain: pairs and sentences are the first of a test set (more than it holds means all of it);
# each adversarial search is 100 gradient steps per target step; steps are integrated gradients'
# points, as `attnlab explain --steps` (a batch of that many copies of the sentence).
EXPLAIN_RANGES = {"pairs": 1_000_000, "sentences": 1_000_000, "adversarial": 10_000,
                  "steps": 1_024, "seeds": MAX_SEEDS}


@dataclass(frozen=True)
class Budget:
    """How long every member trains: `updates` updates, or until `patience` validations without
    improvement (converge) under a maximum of `updates`."""

    updates: int
    patience: int | None = None     # None: exactly `updates` updates

    @property
    def converge(self) -> bool:
        return self.patience is not None

    def describe(self) -> str:
        if self.patience is None:
            return f"{self.updates:,} updates"
        return (f"to convergence (early stopping after {self.patience} validations without "
                f"improvement, at most {self.updates:,} updates)")

    def overrides(self) -> dict:
        """The train.* keys that give this budget (--scale multiplies max_steps later)."""
        return {"train.max_steps": self.updates,
                "train.max_epochs": None, "train.max_minutes": None,
                "train.early_stopping.patience": self.patience}


@dataclass
class Member:
    """One run of a suite: `config` with `overrides` (dotted key -> value)."""

    name: str
    label: str
    config: Path
    overrides: dict = field(default_factory=dict)
    minutes_of: str | None = None   # equal wall time: the member whose training minutes to use
    paper_row: str | None = None    # the row of the suite's paper table this member matches
    # A translation member trained the other way (target to source) beside `reverse_of`, whose
    # attention `--explain` reads both ways, intersected and grown
    # (attnlab.compare.run.explain_records)
    reverse_of: str | None = None
    example: str | None = None      # its own example sentence (a reverse member reads the other
    #                                 language), else the suite's

    @property
    def titled(self) -> str:
        return titled(self.label, self.name)


def titled(label: str, name: str) -> str:
    """A member as a report names it where the name to type (`--only NAME`) matters too:
    'no attention (plain)'; elsewhere a report shows the label alone."""
    return label if label == name else f"{label} ({name})"


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
    seeds: int = 1
    budget: Budget | None = None    # None: the members' configs decide (a suite file of old)
    expect: list[Expectation] = field(default_factory=list)
    explain: dict = field(default_factory=dict)   # see EXPLAIN_KEYS

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

    def reverse_member(self, name: str) -> Member | None:
        """The member trained the other way beside member `name` (its `reverse_of`), if any."""
        return next((member for member in self.members if member.reverse_of == name), None)

    def overrides_for(self, member: Member, data: str | None = None) -> list[str]:
        """`key=value` overrides for `member`: the data folder, the suite's, then its own."""
        values: dict = {}
        folder = data or self.data
        if folder is not None:
            values.update(data_overrides(self.task, folder))
        if self.budget is not None:
            values.update(self.budget.overrides())
        values.update(self.overrides)
        values.update(member.overrides)
        if folder is not None:
            values = _with_data_folder(values, folder)
        return [f"{key}={json.dumps(value)}" for key, value in values.items()]


def _with_data_folder(value, folder: str):
    """`value` with "{data}" in its strings (at any depth) replaced by `folder`."""
    if isinstance(value, str):
        return value.replace("{data}", folder)
    if isinstance(value, dict):
        return {key: _with_data_folder(item, folder) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_data_folder(item, folder) for item in value]
    return value


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
    check_keys(data, SUITE_KEYS, str(path))
    for key in ("name", "task", "members"):
        if key not in data:
            raise ConfigError(f"{path}: missing key {key!r}")
    task = data["task"]
    if not isinstance(task, str) or task not in RECIPES:
        raise ConfigError(f"{path}: task must be one of {', '.join(RECIPES)}, got {task!r}"
                          f"{checks.did_you_mean(task, RECIPES)}")
    for key in ("name", "title", "claim", "paper", "data", "make_data", "example",
                "scale_note"):
        if data.get(key) is not None:
            checks.text(data[key], f"{path}: {key}")
    if data.get("set") is not None and not isinstance(data["set"], dict):
        raise ConfigError(f"{path}: set must be a mapping of dotted keys to values, got "
                          f"{data['set']!r}")
    members = _members(data["members"], path)
    budget = _budget(data.get("budget"), path)
    if budget is not None:
        decided = set(budget.overrides())
        for where, values in [("set", data.get("set") or {}),
                              *((f"member {m.name} set", m.overrides) for m in members)]:
            clash = sorted(decided & set(values))
            if clash:
                raise ConfigError(f"{path}: {where} gives {', '.join(clash)}, which the budget "
                                  f"decides for every member; remove it or change the budget")
    seeds = whole_number(data.get("seeds", 1), f"{path}: seeds", most=MAX_SEEDS)
    return Suite(name=str(data["name"]), task=task, title=str(data.get("title", "")),
                 path=path, members=members, claim=str(data.get("claim", "")),
                 paper=data.get("paper"), data=data.get("data"),
                 make_data=data.get("make_data"), overrides=dict(data.get("set") or {}),
                 evaluate=_evaluate(data.get("evaluate"), path), example=data.get("example"),
                 scale_note=str(data.get("scale_note", "")), seeds=seeds,
                 budget=budget,
                 expect=_expectations(data.get("expect"), members, task, path),
                 explain=_explain(data.get("explain"), path))


def _evaluate(entry, path: Path) -> dict:
    """The `evaluate:` block: beam (1 to MAX_BEAM), limit (the first N test sentences) and
    length_edges (the length buckets' edges)."""
    if entry is None:
        return {}
    where = f"{path}: evaluate"
    check_keys(entry, EVALUATE_KEYS, where)
    block = dict(entry)
    if block.get("beam") is not None:
        whole_number(block["beam"], f"{where}: beam", most=MAX_BEAM)
    if block.get("limit") is not None:
        whole_number(block["limit"], f"{where}: limit")
    if block.get("length_edges") is not None:
        block["length_edges"] = checks.edges(block["length_edges"], f"{where}: length_edges")
    return block


def _explain(entry, path: Path) -> dict:
    """The `explain:` block: `methods` a list of attribution methods (empty: attention's own
    readings alone), the rest positive whole numbers."""
    if entry is None:
        return {}
    check_keys(entry, EXPLAIN_KEYS, f"{path}: explain")
    block: dict[str, Any] = {key: whole_number(value, f"{path}: explain: {key}",
                                               most=EXPLAIN_RANGES[key])
                             for key, value in entry.items() if key != "methods"}
    if "methods" in entry:
        methods = entry["methods"]
        if not isinstance(methods, list) or not all(
                isinstance(method, str) and method in METHODS for method in methods):
            wrong = next((method for method in methods if method not in METHODS), None) \
                if isinstance(methods, list) else None
            raise ConfigError(f"{path}: explain: methods is a list of {', '.join(METHODS)}, "
                              f"got {methods!r}{checks.did_you_mean(wrong, METHODS)}")
        block["methods"] = list(methods)
    return block


def _budget(entry, path: Path) -> Budget | None:
    """`{updates: N}` or `{converge: {patience: P, max_updates: M}}`."""
    if entry is None:
        return None
    where = f"{path}: budget"
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in (
            "updates", "converge"):
        raise ConfigError(f"{where} is {{updates: N}} or {{converge: {{patience: P, "
                          f"max_updates: M}}}} (never wall time), got {entry!r}")
    if "updates" in entry:
        return Budget(whole_number(entry["updates"], f"{where}: updates", most=MAX_UPDATES))
    converge = entry["converge"]
    check_keys(converge, {"patience", "max_updates"}, f"{where}: converge")
    for key in ("patience", "max_updates"):
        if key not in converge:
            raise ConfigError(f"{where}: converge needs {key}")
    return Budget(whole_number(converge["max_updates"], f"{where}: max_updates",
                               most=MAX_UPDATES),
                  whole_number(converge["patience"], f"{where}: patience", most=MAX_PATIENCE))


def _expectations(entries, members: list[Member], task: str, path: Path) -> list[Expectation]:
    """The `expect:` claims, every key of each checked (checks.expectation) against the members
    and the metrics the task's records hold."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expect must be a list of {entry_forms()}")
    names = [member.name for member in members]
    metrics = RECIPES[task].comparison.metrics()
    return [checks.expectation(entry, names, task, metrics, f"{path}: expect {number}")
            for number, entry in enumerate(entries, start=1)]


def _members(entries, path: Path) -> list[Member]:
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: members must be a non-empty list")
    members: list[Member] = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: member {number}"
        if not isinstance(entry, dict) or "name" not in entry or "config" not in entry:
            raise ConfigError(f"{where}: each member needs a name and a config")
        check_keys(entry, MEMBER_KEYS, where)
        name = entry["name"]
        if not isinstance(name, str) or not name or "/" in name or name.startswith(".") or \
                name in {m.name for m in members}:
            raise ConfigError(f"{where}: name {name!r} must be a unique plain folder name")
        where = f"{where} ({name})"
        for key in ("config", "label", "paper_row"):
            if entry.get(key) is not None:
                checks.text(entry[key], f"{where}: {key}")
        if entry.get("set") is not None and not isinstance(entry["set"], dict):
            raise ConfigError(f"{where}: set must be a mapping of dotted keys to values, got "
                              f"{entry['set']!r}")
        config = _member_config(entry["config"], path, where)
        minutes_of = _earlier(entry.get("minutes_of"), members, "minutes_of", where)
        reverse_of = _earlier(entry.get("reverse_of"), members, "reverse_of", where)
        if reverse_of is not None and reverse_of in {m.reverse_of for m in members}:
            raise ConfigError(f"{where}: member {reverse_of!r} already has a reverse "
                              f"member; give each member at most one")
        example = entry.get("example")
        if example is not None and (not isinstance(example, str) or not example.strip()):
            raise ConfigError(f"{where}: example must be a sentence, got {example!r}")
        members.append(Member(name, entry.get("label", name), config,
                              dict(entry.get("set") or {}), minutes_of, entry.get("paper_row"),
                              reverse_of, example))
    return members


def _earlier(value, members: list[Member], key: str, where: str) -> str | None:
    """A member's `minutes_of` or `reverse_of`: None, or the name of an earlier member."""
    names = [member.name for member in members]
    if value is not None and (not isinstance(value, str) or value not in names):
        raise ConfigError(f"{where}: {key} must name an earlier member, got {value!r}"
                          f"{checks.did_you_mean(value, names)}")
    return value


def _member_config(entry: str, suite_path: Path, where: str) -> Path:
    """A member's config: a file beside the suite (or an absolute path), else a shipped config
    of that name (`config: multi30k-bahdanau`), so a user's own suite needs no copies."""
    config = (suite_path.parent / entry).resolve()
    if config.is_file():
        return config
    bare = entry.removesuffix(".yaml")
    if len(Path(entry).parts) == 1 and bare in configs.config_names():
        return configs.config_path(bare).resolve()
    raise ConfigError(f"{where}: config not found: {config} (nor a shipped config of that "
                      f"name: attnlab config list shows them)")

