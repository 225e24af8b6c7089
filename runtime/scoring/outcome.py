"""What scoring a submission gives: a `Score`, and the failure modes scoring names.

The lowest module of mlab.scoring: every way of scoring (tabular, timed, a task's evaluator)
returns a Score, so they import it from here and not from one another.
"""
from __future__ import annotations

from dataclasses import dataclass

SUBMISSION_FORMAT_ERROR = "submission format error"
NOT_SCORED = "not scored"
SMALL_IMPROVEMENT = "small improvement"


@dataclass
class Score:
    value: float | None
    submitted: bool
    failure_mode: str | None = None
    detail: str | None = None
    baseline: dict | None = None  # timed metrics: the starter timed side by side
