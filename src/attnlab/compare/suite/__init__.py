"""What a suite is: its YAML definition (members, seeds, budget, claims) and the checks made when
it is loaded. Knows no run directory."""

from .definition import Member, Suite, load_suite, shipped_suites

__all__ = ["Member", "Suite", "load_suite", "shipped_suites"]
