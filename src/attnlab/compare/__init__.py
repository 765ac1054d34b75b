"""`attnlab compare`: suites of runs that reproduce the claims of the attention papers
(as surveyed in Lilian Weng's "Attention? Attention!", 2018), and their report.

    from attnlab.compare import RunOptions, load_suite, run_suite, write_report
    suite = load_suite("mechanisms")
    run_suite(suite, "runs/mechanisms", RunOptions(data="data/multi30k"))
    write_report(suite, "runs/mechanisms", RunOptions())

Four rooms, imports running one way (report > run > stats > suite, an import-linter contract):
suite/ what a suite is; run/ its runs and their records; stats/ the numbers across seeds;
report/ the pages.
"""

from .report import write_report
from .run import RunOptions, run_suite
from .suite import Member, Suite, load_suite, shipped_suites

__all__ = ["Member", "RunOptions", "Suite", "load_suite", "run_suite", "shipped_suites",
           "write_report"]
