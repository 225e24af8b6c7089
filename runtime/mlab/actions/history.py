"""Run state kept outside the workspace and rebuilt from the trace: undo stacks, research log.

Both record what each step did to them (undo pushes and pops, text appended to the log), the
trace stores those records, and `replay` rebuilds the state from them when a run resumes.
"""
from __future__ import annotations

import os
from pathlib import Path

from mlab.text import utf8_safe
from mlab.snapshots import ObjectStore

MAX_UNDO_DEPTH = 100  # per file; older versions are forgotten


class EditHistory:
    """Per-file stacks of earlier contents (by object hash; None = the file did not exist)."""

    def __init__(self, store: ObjectStore):
        self.store = store
        self.stacks: dict[str, list[str | None]] = {}
        self.pending: list[list] = []

    def push(self, rel: str, path: Path) -> None:
        """Remember `path`'s current content (or its absence) before an edit changes it."""
        digest = self.store.put_file(path) if path.is_file() else None
        self._push(rel, digest)
        self.pending.append(["push", rel, digest])

    def _push(self, rel: str, digest: str | None) -> None:
        stack = self.stacks.setdefault(rel, [])
        stack.append(digest)
        del stack[:-MAX_UNDO_DEPTH]

    def depth(self, rel: str) -> int:
        return len(self.stacks.get(rel, ()))

    def pop(self, rel: str) -> tuple[bool, bytes | None]:
        """(True, earlier content or None if the file did not exist) or (False, None) when empty."""
        stack = self.stacks.get(rel)
        if not stack:
            return False, None
        digest = stack.pop()
        self.pending.append(["pop", rel, digest])
        return True, None if digest is None else self.store.get_bytes(digest)

    def take_pending(self) -> list[list]:
        """The operations of the current step (for its trace record), clearing them."""
        out, self.pending = self.pending, []
        return out

    def replay(self, operations: list[list]) -> None:
        for op, rel, digest in operations:
            if op == "push":
                self._push(rel, digest)
            elif self.stacks.get(rel):
                self.stacks[rel].pop()


class ResearchLog:
    """The run's research log (research_log.md in the run folder, never in the workspace)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.pending = ""

    def text(self) -> str:
        from mlab.confined import Refused, read_bytes

        try:
            return read_bytes(self.path.parent, self.path.name).decode("utf-8", "replace")
        except (FileNotFoundError, Refused):
            return ""

    def append(self, text: str) -> None:
        entry = utf8_safe(text if text.endswith("\n") else text + "\n")
        from mlab.confined import open_for_append

        with os.fdopen(open_for_append(self.path.parent, self.path.name), "w", encoding="utf-8") as handle:
            handle.write(entry)
        self.pending += entry

    def take_pending(self) -> str:
        out, self.pending = self.pending, ""
        return out

    def rebuild(self, appended: list[str]) -> None:
        """Rewrite the log from the texts recorded in the trace (undoing unrecorded appends)."""
        from mlab.confined import write_into

        write_into(self.path.parent, self.path.name, "".join(appended))
        self.pending = ""
