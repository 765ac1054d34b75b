"""Where a suite's runs live and what state each is in: `DIR/<member>/seed-<k>`, finished
when its compare.json record exists, interrupted when it has a `last` checkpoint only."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..suite.definition import Member, Suite

RECORD = "compare.json"


@dataclass
class RunOptions:
    """data: the data folder for every member (default the suite's); scale: multiply every
    update budget (e.g. 4 on a GPU); rwth: folder of the RWTH gold alignments; progress: bars
    on a terminal while members train and are scored; retrain: members whose runs are trained
    afresh, replacing what is there; wait: for a run another process holds, instead of
    refusing it."""

    data: str | None = None
    scale: float = 1.0
    rwth: str | os.PathLike | None = None
    progress: bool = True
    seeds: int | None = None    # None: the suite's
    retrain: frozenset[str] = frozenset()
    wait: bool = False

    def seeds_of(self, suite: Suite) -> int:
        return self.seeds or suite.seeds


@dataclass(frozen=True)
class Job:
    """One training run of a suite: a member with one of its seeds (1..N)."""

    member: Member
    seed: int

    @property
    def name(self) -> str:
        return f"{self.member.name} seed {self.seed}"


def seed_dir(directory: Path, member: str, seed: int) -> Path:
    return Path(directory) / member / f"seed-{seed}"


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
