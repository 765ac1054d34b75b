"""The configs shipped with attnlab, by name: one commented YAML per paper setup in this folder
(`multi30k-bahdanau`, `dates-bahdanau`, ...) and the comparison suites in `compare/` (whose
`config: ../NAME.yaml` lines name the configs beside them).

    config_file("multi30k-bahdanau")     # what `attnlab train multi30k-bahdanau` trains
    shipped_file("mechanisms")           # a config or a suite, for `attnlab config show`
    summary(config_path("shapes-soft"))  # its first comment line, for `attnlab config list`

They are package data: the same files in a checkout (where `configs/` at the root links here)
and in an installed wheel. Reading them is `attnlab.config`'s job; this module only finds them.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from attnlab.errors import ConfigError

FOLDER = Path(__file__).resolve().parent
SUITE_FOLDER = FOLDER / "compare"
SUFFIXES = (".yaml", ".yml")


def config_names() -> list[str]:
    """The shipped experiment configs' names, sorted."""
    return sorted(path.stem for path in FOLDER.glob("*.yaml"))


def suite_names() -> list[str]:
    """The shipped comparison suites' names, sorted."""
    return sorted(path.stem for path in SUITE_FOLDER.glob("*.yaml"))


def config_path(name: str) -> Path:
    """The shipped config `name` (with or without .yaml)."""
    return _find(_bare(name), FOLDER, config_names(), "config")


def suite_path(name: str) -> Path:
    """The shipped suite `name` (with or without .yaml)."""
    return _find(_bare(name), SUITE_FOLDER, suite_names(), "suite")


def shipped_file(name: str) -> Path:
    """A shipped config, or else a shipped suite, called `name` (no name is both)."""
    name = _bare(name)
    if name in suite_names() and name not in config_names():
        return SUITE_FOLDER / f"{name}.yaml"
    return _find(name, FOLDER, config_names() + suite_names(), "config or suite")


def config_file(argument: str) -> Path:
    """The YAML file a `... train CONFIG` argument means: the file itself when it exists, else
    the shipped config of that name (`multi30k-bahdanau` or `multi30k-bahdanau.yaml`)."""
    path = Path(argument)
    if path.is_file():
        return path
    if len(path.parts) > 1:   # a path, not a name: say it is missing, and what would work
        hint = (f"; the shipped config of that name is {_bare(path.name)!r}"
                if _bare(path.name) in config_names() else "")
        raise ConfigError(f"config file {path} does not exist{hint}")
    if _bare(argument) not in config_names():
        raise ConfigError(f"no config file {argument} here and no shipped config named "
                          f"{_bare(argument)!r}{_did_you_mean(argument, config_names())} "
                          f"(attnlab config list shows the shipped ones)")
    return FOLDER / f"{_bare(argument)}.yaml"


def summary(path: Path) -> str:
    """The first comment line of a YAML file (without '# '), or '' if it has none."""
    with open(path, encoding="utf-8") as file:
        first = file.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""


def _bare(name: str) -> str:
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _find(name: str, folder: Path, names: list[str], kind: str) -> Path:
    if name not in names:
        raise ConfigError(f"no shipped {kind} named {name!r}{_did_you_mean(name, names)} "
                          f"(attnlab config list shows them all)")
    return folder / f"{name}.yaml"


def _did_you_mean(name: str, names: list[str]) -> str:
    close = difflib.get_close_matches(_bare(name), names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
