"""How an agent loop ended, for the loop, its tool-agent steps and `mlab drive`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoopOutcome:
    """How the loop ended: the run's end reason, and a failure mode where it failed."""

    end_reason: str
    failure_mode: str | None = None
    detail: str | None = None


def model_outcome(problem) -> tuple[str, LoopOutcome]:
    """The end reason to record and the outcome of a loop whose model call failed for good, or was not
    made because the run's token or cost limit is spent (mlab.models.errors.BudgetSpent), which ends
    the run as the limit does between steps."""
    limit = getattr(problem, "limit", None)
    if limit:
        return f"{limit}_limit", LoopOutcome(f"{limit}_limit", problem.failure_mode, f"{limit} limit")
    return problem.failure_mode, LoopOutcome("failed", problem.failure_mode, str(problem))
