"""Which experiment config a `train` command runs: the YAML given, or the run directory's own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from attnlab.config import config_from_dict, config_to_dict, load_config
from attnlab.errors import ConfigError

from .checkpoint import RunDir

T = TypeVar("T")


def experiment_config(cls: type[T], path: str | None, run_dir: str | Path,
                      overrides: Sequence[str], resume: bool) -> T:
    """The config `cls` from `path`, or (resuming without one) from the run directory's
    config.json; `overrides` (key=value) applied either way."""
    if path is not None:
        return load_config(path, cls, overrides)
    stored = RunDir(run_dir).file("config.json")
    if not resume or not stored.is_file():
        raise ConfigError(f"no config given and none stored in {run_dir}: pass CONFIG.yaml")
    config = config_from_dict(RunDir(run_dir).read_config(), cls, origin=str(stored))
    return load_config(config_to_dict(config), cls, overrides) if overrides else config
