"""The failure modes a run's result.json names: one enum, kept equal to spec/result.schema.json.

In the kernel because layers below scoring name failure modes too (the model client's errors,
the agent loop). A `StrEnum`, so a mode is the very string result.json holds.
"""
from __future__ import annotations

from enum import StrEnum


class FailureMode(StrEnum):
    RESPONSE_FORMAT_ERROR = "response format error"
    SUBMISSION_FORMAT_ERROR = "submission format error"
    SMALL_IMPROVEMENT = "small improvement"
    LIMIT_REACHED = "limit reached"
    MODEL_API_FAILURE = "model API failure"
    MODEL_REPLIES_EXHAUSTED = "model replies exhausted"
    INTERRUPTED = "interrupted"
    NOT_SCORED = "not scored"
    NO_VALID_NODE = "no valid node"  # a tree search ended without one node that ran, scored and submitted
    AGENT_INSTALL_FAILED = "agent install failed"  # an external agent's environment did not install: it never ran
    TASK_ERROR = "task error"  # the task is broken (found only at run time): never the agent's failure
