"""What each step changed in the workspace, as bounded unified diffs, from the run's snapshots.

The workspace before and after a step are the run's initial manifest with the recorded deltas
applied, so a diff needs no checkout: the two contents are read from objects/. Only text files
are diffed (UTF-8, no NUL byte, at most MAX_TEXT_BYTES); each diff is cut at MAX_DIFF_LINES and
each step shows at most MAX_FILES files, so a page stays small whatever the run did.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from mlab.reports.runs import record_workspaces
from mlab.confined import Refused
from mlab.snapshots import SYMLINK_PREFIX, ObjectStore

MAX_TEXT_BYTES = 256 * 1024
MAX_DIFF_LINES = 400
MAX_FILES = 8
MAX_LINES_COMPARED = 6000  # difflib is quadratic at worst; longer files are summarised instead
# Data files (a new submission.csv, predictions) are summarised by rows and columns and their
# diff is folded, showing its first DATA_PREVIEW_LINES lines: their rows are not worth reading.
DATA_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")
DATA_PREVIEW_LINES = 12


@dataclass
class FileChange:
    path: str
    kind: str                      # added, changed, removed
    diff: list[str] | None = None  # unified diff lines, or None when not shown
    note: str = ""                 # why no diff is shown, or that it was cut
    added: int = 0
    removed: int = 0
    data: str = ""                 # for a data file: its rows and columns, before → after

    @property
    def is_data(self) -> bool:
        return self.path.lower().endswith(DATA_SUFFIXES)


def _data_summary(path: str, old: list[str], new: list[str]) -> str:
    """Rows (lines after the header of a table) and columns of a data file, before → after."""
    table = not path.lower().endswith((".jsonl", ".ndjson"))

    def shape(lines: list[str]) -> str:
        if not lines:
            return "none"
        rows = len(lines) - 1 if table else len(lines)
        if not table:
            return f"{rows:,} row(s)"
        columns = lines[0].rstrip("\r\n").split("\t" if path.lower().endswith(".tsv") else ",")
        shown = ", ".join(columns[:8]) + (f", … ({len(columns)} in all)" if len(columns) > 8 else "")
        return f"{rows:,} row(s), columns {shown}"

    before, after = shape(old), shape(new)
    return after if before == "none" else f"{before} → {after}"


def _text(store: ObjectStore, digest: str | None) -> tuple[list[str] | None, str]:
    """The lines of a stored file, or None and why it is not shown as text."""
    if digest is None:
        return [], ""
    if digest.startswith(SYMLINK_PREFIX):
        return [f"-> {digest[len(SYMLINK_PREFIX):]}\n"], ""
    try:
        with store.open_object(digest) as reader:
            size = os.fstat(reader.fileno()).st_size
            if size > MAX_TEXT_BYTES:
                return None, f"{size:,} bytes: too large to diff"
            data = reader.read()
    except Refused as refused:
        return None, str(refused)
    except OSError:
        return None, "the stored content is missing"
    if b"\0" in data[:8192]:
        return None, f"binary file ({size:,} bytes)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, f"not UTF-8 text ({size:,} bytes)"
    return text.splitlines(keepends=True), ""


def file_change(store: ObjectStore, path: str, before: str | None, after: str | None) -> FileChange:
    kind = "added" if before is None else "removed" if after is None else "changed"
    change = FileChange(path, kind)
    old, old_note = _text(store, before)
    new, new_note = _text(store, after)
    if old is None or new is None:
        change.note = old_note or new_note
        return change
    if change.is_data:
        change.data = _data_summary(path, old, new)
    if len(old) > MAX_LINES_COMPARED or len(new) > MAX_LINES_COMPARED:
        change.note = f"{len(old):,} → {len(new):,} lines: too long to diff"
        return change
    lines = list(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}", n=3))
    change.added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    change.removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    if len(lines) > MAX_DIFF_LINES:
        change.note = f"diff cut at {MAX_DIFF_LINES} of {len(lines):,} lines"
        lines = lines[:MAX_DIFF_LINES]
    change.diff = [line if line.endswith("\n") else line + "\n" for line in lines]
    return change


def step_changes(run_dir: Path, meta: dict, records: list[dict]) -> list[tuple[list[FileChange], int]]:
    """Per step (in order): the file changes shown and how many more files changed unshown. A
    tree-search node's changes are against its parent node's workspace (see record_workspaces)."""
    store = ObjectStore(Path(run_dir) / "objects", durable=False)
    try:
        initial = dict(store.get_json(meta["initial_snapshot"]))
    except (OSError, ValueError):
        return [([], 0) for _ in records]
    out = []
    for record, (before, after) in zip(records, record_workspaces(initial, records)):
        delta = record.get("snapshot") or {}
        paths = sorted(set(delta.get("changed", {})) | set(delta.get("removed", [])))
        shown = [file_change(store, path, before.get(path), after.get(path)) for path in paths[:MAX_FILES]]
        out.append((shown, max(len(paths) - MAX_FILES, 0)))
    return out
