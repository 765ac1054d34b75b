"""The suite's report, DIR/report.html and DIR/results.md: tables, findings, the papers' own
figures and the explanation section, from the runs' records and the statistics (attnlab.compare.
stats); it computes no test of its own."""

from .page import write_report

__all__ = ["write_report"]
