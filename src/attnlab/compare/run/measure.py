"""Scoring one trained member through its task's record (attnlab.recipes): each recipe's
`comparison.scores` gives its figures as a plain JSON-able dict ("scores", and what the report
draws: BLEU by length, AER, the example sentence's attention...)."""

from __future__ import annotations

import os
from pathlib import Path

from attnlab.recipes import RECIPES

from ..suite.definition import Member, Suite


def member_scores(task: str, run_dir: Path, suite: Suite, member: Member,
                  rwth: str | os.PathLike | None = None, progress: bool = False) -> dict:
    """The member's scores, its heatmap of its own example sentence or else the suite's;
    `progress`: bars on a terminal while it decodes and aligns."""
    return RECIPES[task].comparison.scores(run_dir, suite.evaluate,
                                           member.example or suite.example, rwth, progress)
