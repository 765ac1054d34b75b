"""What a suite's runs were asked for: each `attnlab compare` that trains writes DIR/asked.json
(the options that shape the runs: seeds, scale, data, the RWTH gold; and the members it was
asked to train, added to those asked before), so a report written later, by a bare `--report`,
says how its runs were made and advises a command that makes them again as they are."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from attnlab.files import atomic_output

from ..suite.definition import Suite
from .layout import RunOptions

ASKED_FILE = "asked.json"


def record_asked(directory: Path, options: RunOptions, members: Iterable[str]) -> None:
    """Write DIR/asked.json for a training command: its shaping options, and the members asked
    of DIR so far (these and the earlier commands')."""
    earlier = _read(directory)
    asked = {"seeds": options.seeds, "scale": options.scale,
             "data": None if options.data is None else str(options.data),
             "rwth": None if options.rwth is None else os.fspath(options.rwth),
             "members": sorted({*earlier.get("members", []), *members})}
    Path(directory).mkdir(parents=True, exist_ok=True)
    with atomic_output(Path(directory) / ASKED_FILE) as file:
        json.dump(asked, file, indent=1)


def as_asked(directory: Path, options: RunOptions) -> RunOptions:
    """The options a report describes: those its own command gives, the rest as the runs'
    training commands asked (DIR/asked.json); `options` alone when DIR has no such file."""
    asked = _read(directory)
    return replace(options,
                   seeds=options.seeds if options.seeds is not None else asked.get("seeds"),
                   scale=options.scale if options.scale != 1 else asked.get("scale", 1.0),
                   data=options.data if options.data is not None else asked.get("data"),
                   rwth=options.rwth if options.rwth is not None else asked.get("rwth"))


def asked_members(suite: Suite, directory: Path) -> list[str]:
    """The members DIR's training commands asked for, in suite order: every member when none
    was named (or DIR has no asked.json)."""
    named = set(_read(directory).get("members", []))
    every = [member.name for member in suite.members]
    return [name for name in every if name in named] or every


def _read(directory: Path) -> dict:
    path = Path(directory) / ASKED_FILE
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}   # none yet, or cut short: the report then describes its own command
    return found if isinstance(found, dict) else {}
