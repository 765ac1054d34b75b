"""One process at a time trains into a run directory: an OS-level lock on `RUN/compare.lock`.

    with run_lock(run_dir, wait=False):     # UserError naming the holder's pid, or wait
        ...train and score...

The lock is fcntl.flock on the open file, so the kernel releases it when the process ends,
however it ends (a kill, a crash, a reboot): there is never a stale lock to remove. The file
holds the pid of the process that has it, for the message of the one that does not; it is
emptied on release and never deleted (deleting a lock file lets two processes lock two files).
Each run (member and random seed) has its own lock, so `--jobs` children, one run each, never
block one another or their parent, while two independent commands on the same run do. The
report has a lock of its own, `DIR/report.lock`, so that report.html and results.md come from
one process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from attnlab.errors import UserError
from attnlab.files import writing

LOCK_FILE = "compare.lock"
REPORT_LOCK = "report.lock"   # DIR's own: one process at a time writes report.html and results.md


class Busy(UserError):
    """The lock is held by another process (and the caller would not wait)."""


def run_lock(run_dir: Path, wait: bool = False,
             log: Callable[[str], None] = print) -> contextlib.AbstractContextManager[None]:
    """Hold `run_dir`'s lock for the block. Held by another process: a UserError at once
    naming its pid, or (wait) one line saying so, then block until it is released."""
    return _hold(Path(run_dir) / LOCK_FILE, f"{run_dir} is being trained by", wait, log)


def report_lock(directory: Path,
                log: Callable[[str], None] = print) -> contextlib.AbstractContextManager[None]:
    """Hold the lock of `directory`'s report for the block, waiting for another writer."""
    return _hold(Path(directory) / REPORT_LOCK, f"the report in {directory} is being written by",
                 True, log)


@contextlib.contextmanager
def _hold(path: Path, busy: str, wait: bool, log: Callable[[str], None]) -> Iterator[None]:
    with writing(path, "lock"):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(descriptor):
            holder = _holder(descriptor)
            if not wait:
                raise Busy(f"{busy} {holder}; let it finish, or pass --wait to start "
                           f"once it has")
            log(f"{busy} {holder}: waiting for it to finish")
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)   # releases the lock


def _try_lock(descriptor: int) -> bool:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(descriptor: int) -> str:
    """'process 1234' from the lock file; a holder that has just taken the lock may not have
    written its pid yet, so read again for a moment before saying less."""
    for _ in range(20):
        text = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return f"process {text}"
        time.sleep(0.05)
    return "another process"
