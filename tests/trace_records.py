"""A trace record made by hand, for the tests that write traces of their own."""
from __future__ import annotations


def record(step: int, **fields) -> dict:
    """A trace record of the shape spec/trace.schema.json gives one (readers refuse any other)."""
    return {"step": step, "started": "2026-12-01T10:00:00.000Z", "ended": "2026-12-01T10:00:01.000Z",
            "duration_s": 1.0, "elapsed_s": float(step), "action": None, "action_input": None, "resolved": None,
            "observation": "", "status": "ok", "end_reason": None, "compute": None,
            "snapshot": {"changed": {}, "removed": []}, "edits": [], "research_log": "", "model": None,
            "hooks": None, **fields}
