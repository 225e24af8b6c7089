"""How an agent loop ended, for the loop, its tool-agent steps and `mlab drive`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class LoopOutcome:
    """How the loop ended: the run's end reason, and a failure mode where it failed."""

    end_reason: str
    failure_mode: str | None = None
    detail: str | None = None
