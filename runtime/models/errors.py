"""How model calls fail: the exceptions the client, the offline models and the agent loop share.

Kept apart from the client so the offline models (which the client registers) need not import it.
"""
from __future__ import annotations


class ModelError(Exception):
    """A model call failed for good; the run ends with failure mode `model API failure`."""

    failure_mode = "model API failure"


class RepliesExhausted(ModelError):
    """An offline model ran out of replies (scripted file, replay trace, demonstration)."""

    failure_mode = "model replies exhausted"


class MissingKey(Exception):
    """A provider's API key is not set; a one-line message for the user."""
