"""A suite's claims fixed before its runs: when the first run of DIR starts (no run of any
member there yet), the suite's `expect:` list is written to DIR/claims.json, and never again.
The report holds the claims it decides against that registration: unchanged, changed since (it
then decides the first encoding too and prints both), or never registered (runs made before
attnlab registered claims, or trained outside `attnlab compare`)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from attnlab.files import atomic_output

from ..stats.claims import Expectation
from ..suite.definition import Suite
from .layout import member_state, seed_dir

CLAIMS_FILE = "claims.json"


def register_claims(suite: Suite, directory: Path, seeds: int) -> None:
    """Write DIR/claims.json when no run of the suite is in DIR yet (call it after every check
    that can refuse and before the first run trains)."""
    path = directory / CLAIMS_FILE
    if path.exists() or any(member_state(seed_dir(directory, member.name, k)) != "new"
                            for member in suite.members for k in range(1, seeds + 1)):
        return
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as file:
        json.dump({"registered": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                   "expect": [asdict(claim) for claim in suite.expect]}, file, indent=1)


def registered_claims(directory: Path) -> tuple[str, list[Expectation]] | None:
    """(when, the claims) as registered, or None when DIR has no registration."""
    path = directory / CLAIMS_FILE
    if not path.is_file():
        return None
    found = json.loads(path.read_text(encoding="utf-8"))
    return found["registered"], [Expectation(**claim) for claim in found["expect"]]
