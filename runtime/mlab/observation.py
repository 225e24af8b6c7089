"""What an action returns to the agent: an `Observation` (or `ActionFailed`, raised by an action and
turned into one)."""
from __future__ import annotations

from dataclasses import dataclass, field

STATUSES = ("ok", "error", "shutdown", "final", "ended")


@dataclass
class Observation:
    """The text the agent reads after an action, with what the harness must know about it.

    status: ok; error (the action was refused or failed; the agent can correct it);
    shutdown (a limit was reached; nothing was done); final (the run ends with this action);
    ended (no action: the run was finished by the harness, see Run.finish).
    compute: the accounting of a script run (wall_s, cpu_s, peak_memory_bytes, ...), if any.
    """

    text: str
    status: str = "ok"
    compute: dict | None = None
    details: dict = field(default_factory=dict)

    @property
    def ends_run(self) -> bool:
        return self.status == "final"

    def __str__(self) -> str:
        return self.text


def error(text: str) -> Observation:
    return Observation(text, status="error")


class ActionFailed(Exception):
    """An action could not be done; the message becomes the observation, for the agent to act on."""
