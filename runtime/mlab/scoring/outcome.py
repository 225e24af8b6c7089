"""What scoring a submission gives: a `Score` (its failure mode a mlab.failure.FailureMode).

The lowest module of mlab.scoring: every way of scoring (tabular, timed, a task's evaluator)
returns a Score, so they import it from here and not from one another.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlab.failure import FailureMode


@dataclass
class Score:
    value: float | None
    submitted: bool
    failure_mode: FailureMode | None = None
    detail: str | None = None
    baseline: dict | None = None  # timed metrics: the starter timed side by side
