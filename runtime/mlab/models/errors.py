"""How model calls fail: the exceptions the client, the offline models and the agent loop share.

Kept apart from the client so the offline models (which the client registers) need not import it.
"""
from __future__ import annotations

from mlab.failure import FailureMode


class ModelError(Exception):
    """A model call failed for good; the run ends with failure mode `model API failure`."""

    failure_mode = FailureMode.MODEL_API_FAILURE


class RepliesExhausted(ModelError):
    """An offline model ran out of replies (scripted file, replay trace, demonstration)."""

    failure_mode = FailureMode.MODEL_REPLIES_EXHAUSTED


class DemonstrationDone(RepliesExhausted):
    """The demo model has played every variant of the demonstration, and the next reply could only
    repeat one: a tree search ends there (as when its policy is done) instead of evaluating
    unchanged code again and again."""


class ToolsRefused(ModelError):
    """The server refused the `tools` field of a chat call (the model or the server cannot take
    tools); a tool agent continues in its declared fallback format."""


class BudgetSpent(ModelError):
    """A model call was not made: the run's token or cost limit is spent. The run ends as when the
    limit is reached between steps (end reason `tokens_limit` or `cost_limit`)."""

    failure_mode = FailureMode.LIMIT_REACHED

    def __init__(self, limit: str):
        super().__init__(f"the run's {limit} limit was reached")
        self.limit = limit

    @property
    def end_reason(self) -> str:
        return f"{self.limit}_limit"


class MissingKey(Exception):
    """A provider's API key is not set; a one-line message for the user."""


def lookup_errors(litellm) -> tuple[type[BaseException], ...]:
    """What litellm's table lookups (keys a provider needs, whether it caches prompts, a price,
    a token count) raise for a model or a message they do not know: its own "not mapped" and
    provider errors, and the plain lookup errors of its tables. Anything else is a bug to see."""
    from openai import OpenAIError  # litellm's provider errors (BadRequestError, ...) derive from the openai client's

    return (ValueError, KeyError, TypeError, LookupError, litellm.exceptions.ModelNotMappedError, OpenAIError)
