"""`attnlab compare --jobs N`: train N runs of a suite at once, each in a process of its own.

Each run is the command itself with `--only MEMBER --seed K`, one torch thread per process
(so a 2-core machine runs two, a GPU machine many small models side by side), its output in
`DIR/<member>/seed-<k>.log`. Runs resume exactly as one at a time do, so a killed `--jobs` run
resumes every member on the next call. A member with `minutes_of` waits for its source run of
the same random seed. Each child takes its own run's lock (attnlab.compare.run.lock), so children
never block one another, and a run another command holds is refused (or waited for, --wait) by
the child that would train it. Children get SIGTERM when this process dies (Linux), and on
Ctrl-C each saves its `last` checkpoint before it stops.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from attnlab.errors import UserError

from ..suite.definition import Suite
from .layout import Job, RunOptions, member_state, read_record, seed_dir

POLL_SECONDS = 0.5


def child_command(suite: Suite, directory: Path, options: RunOptions, job: Job) -> list[str]:
    command = [sys.executable, "-m", "attnlab", "compare", str(suite.path), "--dir",
               str(directory), "--only", job.member.name, "--seed", str(job.seed),
               "--seeds", str(options.seeds_of(suite)), "--scale", repr(options.scale),
               "--quiet"]
    if options.data:
        command += ["--data", str(options.data)]
    if options.rwth:
        command += ["--rwth", str(options.rwth)]
    if job.member.name in options.retrain:
        command += ["--retrain", job.member.name]
    if options.wait:
        command.append("--wait")
    return command


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass   # not Linux: a killed parent leaves its children to finish


def log_path(directory: Path, job: Job) -> Path:
    return Path(directory) / job.member.name / f"seed-{job.seed}.log"


def _ready(job: Job, directory: Path, unfinished: set[tuple[str, int]]) -> bool:
    """A member trained for as long as another waits for that run (same random seed) to
    finish: in this call (it may be retrained), and with its record."""
    source = job.member.minutes_of
    return source is None or ((source, job.seed) not in unfinished and read_record(
        seed_dir(directory, source, job.seed)) is not None)


def _last_line(path: Path) -> str:
    """The last line of a child's log, its error sentence when it failed."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].removeprefix("attnlab: error: ") if lines else ""


def run_parallel(suite: Suite, directory: Path, options: RunOptions, work: list[Job],
                 jobs: int, log: Callable[[str], None] = print) -> None:
    """Run `work` with at most `jobs` processes at once; raises UserError naming every run that
    failed (its log) once the others are done."""
    pending = [job for job in work if job.member.name in options.retrain
               or member_state(seed_dir(directory, job.member.name, job.seed)) != "finished"]
    for job in work:
        if job not in pending:
            log(f"{job.name}: finished, kept")
    running: dict[subprocess.Popen, tuple[Job, float]] = {}
    failed: list[str] = []
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    total, done = len(work), len(work) - len(pending)
    try:
        while pending or running:
            unfinished = {(job.member.name, job.seed)
                          for job in [*pending, *(job for job, _ in running.values())]}
            for job in [job for job in pending if _ready(job, directory, unfinished)]:
                if len(running) >= jobs:
                    break
                pending.remove(job)
                path = log_path(directory, job)
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("ab") as output:
                    process = subprocess.Popen(
                        child_command(suite, directory, options, job), stdout=output,
                        stderr=subprocess.STDOUT, env=environment, preexec_fn=_die_with_parent)
                running[process] = (job, time.monotonic())
                log(f"{job.name}: started (log: {path})")
            if not running and pending:
                names = ", ".join(job.name for job in pending)
                raise UserError(f"{names} wait for runs that did not finish; see the logs")
            time.sleep(POLL_SECONDS)
            for process in [p for p in running if p.poll() is not None]:
                job, started = running.pop(process)
                done += 1
                minutes = (time.monotonic() - started) / 60
                if process.returncode == 0:
                    log(f"[{done}/{total}] {job.name}: finished in {minutes:.1f} minutes")
                else:
                    why = _last_line(log_path(directory, job))
                    failed.append(f"{job.name} (exit {process.returncode}"
                                  f"{': ' + why if why else ''}; {log_path(directory, job)})")
                    log(f"[{done}/{total}] {job.name}: FAILED, see {log_path(directory, job)}")
    except KeyboardInterrupt:
        log("stopping: every running member saves its last checkpoint")
        for process in running:
            process.send_signal(signal.SIGINT)
        for process in running:
            process.wait()
        raise
    if failed:
        raise UserError(f"{len(failed)} run(s) failed: {'; '.join(failed)}")
