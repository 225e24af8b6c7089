"""What an action returns to the agent, and how long texts are bounded."""
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


def utf8_safe(text: str) -> str:
    """`text` with each lone surrogate written as a backslash escape (U+DCFF as the six characters
    \\udcff), so that it can be written as UTF-8: shown to a model, a terminal or a file."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def bound_text(text: str, max_chars: int | None, what: str = "characters") -> str:
    """`text` cut to about `max_chars`, keeping its head and tail and saying how much was left out."""
    if max_chars is None or max_chars <= 0 or len(text) <= max_chars:
        return text
    head = max_chars * 2 // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    return (f"{text[:head]}\n\n[... {omitted:,} {what} omitted: showing the first {head:,} and the "
            f"last {tail:,} of {len(text):,} ...]\n\n{text[len(text) - tail:]}")


class ActionFailed(Exception):
    """An action could not be done; the message becomes the observation, for the agent to act on."""
