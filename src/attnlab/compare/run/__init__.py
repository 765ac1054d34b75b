"""Running a suite: the run directories and their records (layout), the checks of what DIR holds
before anything trains, one run at a time or `--jobs N`, the locks, scoring each run through its
task's record, and the explanation records of `--explain`."""

from .layout import RunOptions
from .runner import run_suite

__all__ = ["RunOptions", "run_suite"]
