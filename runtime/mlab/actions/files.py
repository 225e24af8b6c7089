"""The primitives that work on workspace files without a model or a script.

Each takes (context, inputs, params) and returns an Observation; a problem the agent can fix
is raised as ActionFailed or PathRefused, which the dispatcher turns into an error observation.
Every change an action makes to a file is pushed onto the file's undo stack first.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from mlab.observation import ActionFailed, Observation
from mlab.text import bound_text
from mlab.actions.workspace import PathRefused

MAX_LISTED = 1000
UNDO_SHOWN_CHARS = 10000
BINARY_PROBE = 8192
MAX_WHOLE_BYTES = 32 << 20  # a file read whole into memory (edits, undo) is at most this big


def human_size(size: int) -> str:
    if size < 10_000:
        return f"{size:,} bytes"
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size:,} bytes"


def _lines(text: str) -> str:
    count = len(text.splitlines())
    return f"{count} line{'s' if count != 1 else ''}"


def _refuse_binary(path: Path, rel: str) -> int:
    """The file's size; ActionFailed if its first bytes show it is not text."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        if b"\x00" in handle.read(BINARY_PROBE):
            raise ActionFailed(f"{rel} is a binary file ({human_size(size)}); it cannot be shown as text")
    return size


def read_text(path: Path, rel: str) -> str:
    """A whole text file (refused when binary or too large to hold)."""
    size = _refuse_binary(path, rel)
    if size > MAX_WHOLE_BYTES:
        raise ActionFailed(f"{rel} is too large ({human_size(size)}) to be taken whole; use Read File for its "
                           "beginning and end, or Inspect Script Lines for a part")
    return path.read_bytes().decode("utf-8", errors="replace")


def list_files(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.resolve(inputs["dir_path"], "dir_path")
    rel = ws.relative(real)
    if real.is_file():
        raise ActionFailed(f"{rel} is a file, not a folder; use Read File or Inspect Script Lines to see it")
    if not real.is_dir():
        raise ActionFailed(f"there is no folder {inputs['dir_path']!r} in the workspace; use '.' "
                           "for the top of the workspace")
    lines = []
    entries = sorted(os.scandir(real), key=lambda e: e.name)
    for entry in entries[:MAX_LISTED]:
        info = entry.stat(follow_symlinks=False)
        path = real / entry.name
        if stat.S_ISLNK(info.st_mode):
            lines.append(f"{entry.name}@ (link to {os.readlink(path)})")
        elif stat.S_ISDIR(info.st_mode):
            lines.append(f"{entry.name}/")
        else:
            flag = ", read-only" if ws.read_only_pattern(path) is not None else ""
            lines.append(f"{entry.name}  ({human_size(info.st_size)}{flag})")
    if len(entries) > MAX_LISTED:
        lines.append(f"... and {len(entries) - MAX_LISTED:,} more entries")
    where = "the workspace" if rel == "." else rel
    if not lines:
        return Observation(f"{where} is empty.")
    return Observation(f"Contents of {where}:\n" + "\n".join(lines))


def read_file(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["file_name"], "file_name")
    rel = ws.relative(real)
    max_chars = params.get("max_chars") or 20000
    size = _refuse_binary(real, rel)
    window = 4 * max_chars  # bytes that surely hold max_chars characters of UTF-8
    if size <= 2 * window:
        text = real.read_bytes().decode("utf-8", errors="replace")
        return Observation(bound_text(text, max_chars) if text else f"{rel} is empty.")
    head_chars = max_chars * 2 // 3
    tail_chars = max_chars - head_chars
    with open(real, "rb") as handle:  # a large file: read only its two ends
        head = handle.read(window).decode("utf-8", errors="replace")[:head_chars]
        handle.seek(size - window)
        tail = handle.read(window).decode("utf-8", errors="replace")[-tail_chars:]
    return Observation(f"{head}\n\n[... the middle of this {human_size(size)} file is omitted: showing the "
                       f"first {head_chars:,} and the last {tail_chars:,} characters ...]\n\n{tail}")


def _make_room(ctx, real: Path, rel: str) -> None:
    """Create the folder of a file about to be written, and keep its old content for undoing."""
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ActionFailed(f"cannot create {rel}: a file is in the way of its folder") from None
    ctx.edits.push(rel, real)


def write_text(ctx, name: str, content: str, mode: str) -> tuple[Path, str]:
    """Write (mode "w") or append ("a") `content` to the workspace file `name`; its real path and relative name."""
    ws = ctx.workspace
    real = ws.writable(name, "file_name")
    rel = ws.relative(real)
    _make_room(ctx, real, rel)
    if mode == "a":
        with open(real, mode, encoding="utf-8", newline="") as handle:
            handle.write(content)
        return real, rel
    data = content.encode("utf-8")
    # Overwritten in place, then cut to length: truncating to zero first (mode "w") makes some
    # file systems (ext4) flush the old contents and then wait for that flush at the next
    # rewrite, which cost a step on disk several times all the rest of it.
    with open(os.open(real, os.O_WRONLY | os.O_CREAT, 0o666), "wb") as handle:
        handle.write(data)
        handle.truncate(len(data))
    return real, rel


def write_file(ctx, inputs, params) -> Observation:
    content = inputs["content"]
    _, rel = write_text(ctx, inputs["file_name"], content, "w")
    return Observation(f"Wrote {rel} ({len(content):,} characters, {_lines(content)}).")


def append_file(ctx, inputs, params) -> Observation:
    content = inputs["content"]
    real, rel = write_text(ctx, inputs["file_name"], content, "a")
    return Observation(f"Appended {len(content):,} characters to {rel}; it is now "
                       f"{human_size(real.stat().st_size)}.")


def copy_file(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    source = ws.readable_file(inputs["source"], "source")
    target = ws.resolve(inputs["destination"], "destination")
    if target.is_dir():
        target = target / source.name
    target = ws.writable(str(target), "destination")
    if target == source:
        raise ActionFailed(f"source and destination are the same file ({ws.relative(source)})")
    rel = ws.relative(target)
    _make_room(ctx, target, rel)
    if target.is_symlink():
        target.unlink()
    shutil.copyfile(source, target)
    return Observation(f"Copied {ws.relative(source)} to {rel} ({human_size(target.stat().st_size)}).")


def inspect_lines(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["script_name"], "script_name")
    rel = ws.relative(real)
    start, end = inputs["start_line_number"], inputs["end_line_number"]
    max_lines = params.get("max_lines") or 100
    _refuse_binary(real, rel)
    wanted: dict[int, str] = {}
    total = 0
    with open(real, encoding="utf-8", errors="replace") as handle:  # streamed: any size is fine
        for total, line in enumerate(handle, 1):
            if start <= total < start + max_lines and total <= end:
                wanted[total] = line.rstrip("\r\n")
    if total == 0:
        return Observation(f"{rel} is empty.")
    if start < 1:
        raise ActionFailed(f"start_line_number must be 1 or more (got {start}); lines count from 1")
    if start > total:
        raise ActionFailed(f"start_line_number {start} is past the end of {rel}, which has {total} lines")
    if end < start:
        raise ActionFailed(f"end_line_number ({end}) is before start_line_number ({start})")
    last = min(end, total, start + max_lines - 1)
    notes = []
    if end > total and last == total:
        notes.append(f"the file ends at line {total}")
    if last < min(end, total):
        notes.append(f"at most {max_lines} lines are shown per call; continue from line {last + 1}")
    width = len(str(last))
    body = "\n".join(f"{n:>{width}}: {wanted[n]}" for n in range(start, last + 1))
    header = f"{rel}, lines {start}-{last} of {total}" + (f" ({'; '.join(notes)})" if notes else "") + ":"
    return Observation(header + "\n" + body)


def undo_edit(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.writable(inputs["script_name"], "script_name")
    rel = ws.relative(real)
    found, content = ctx.edits.pop(rel)
    if not found:
        raise ActionFailed(f"there is no earlier version of {rel} to go back to: no action has changed "
                           "it, or every change has already been undone")
    left = ctx.edits.depth(rel)
    more = f" ({left} earlier version{'s' if left != 1 else ''} left)" if left else ""
    if content is None:
        if real.is_file() or real.is_symlink():
            real.unlink()
        return Observation(f"Removed {rel}: it did not exist before its first edit{more}.")
    if real.is_symlink():
        real.unlink()
    real.write_bytes(content)
    text = content.decode("utf-8", errors="replace")
    return Observation(f"{rel} is back to its content before the last edit{more}. It now reads:\n"
                       + bound_text(text, UNDO_SHOWN_CHARS))


def final_answer(ctx, inputs, params) -> Observation:
    return Observation("Your final answer was received; the run ends here.", status="final")


def append_log(ctx, inputs, params) -> Observation:
    content = inputs["content"]
    ctx.research_log.append(content)
    return Observation(f"Appended {len(content):,} characters to the research log.")


__all__ = ["list_files", "read_file", "write_file", "append_file", "copy_file", "inspect_lines",
           "undo_edit", "final_answer", "append_log", "PathRefused"]
