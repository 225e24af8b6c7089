"""The run's trace: trace.jsonl, one JSON record per step, appended and fsynced, never rewritten.

A record is written with one write() and fsynced, so a kill leaves at most one incomplete
line at the end. Reading keeps the longest prefix of complete, well-formed records; resuming
moves anything after it into trace.jsonl.torn (nothing recorded is thrown away) and cuts the
file back to that prefix before appending again.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from mlab.bounded_json import TooDeep, TooLarge
from mlab.errors import RunError
from mlab.standard_json import dumps
from mlab.text import note_once

TRACE = "trace.jsonl"
TORN_SUFFIX = ".torn"
# Version 7: an external exchange may say it compacted the agent's conversation (compaction) and what
# the gateway dropped from its request (notes).
# Version 6: an external exchange may name its dialect, the model asked for, stream and stalled;
# a model call may hold its cache writes (cache_write_tokens).
# Version 5: a script's compute may hold its accelerators' busy seconds (compute.accelerator).
# Version 4: records may hold an external agent's gateway exchange (model.request, model.external).
# Version 3: records may hold native tool calls and tree-search nodes (optional fields).
# Version 2: records carry schema_version and may store long texts apart (see store_long_texts);
# a record without schema_version is a version-1 record, read the same way.
TRACE_VERSION = 7
# A text of the record longer than this goes into objects/ once, by content hash; the record keeps
# a preview of PREVIEW_CHARS with a note, and lists where it was taken from under "stored".
STORED_OVER_CHARS = 65_536
PREVIEW_CHARS = 4_000
STORED_FIELDS = ("action", "action_input", "resolved", "observation", "research_log", "model", "hooks")


def timestamp(seconds: float | None = None) -> str:
    """UTC time as ISO 8601 with milliseconds, e.g. 2026-11-30T04:15:00.123Z."""
    moment = datetime.fromtimestamp(time.time() if seconds is None else seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# A lone surrogate cannot be written as UTF-8; in JSON it can be written as a \uXXXX escape, which
# json.loads reads back as the same code point. Such strings come from a model (a "\udcff" escape in
# its reply) and from file names that are not valid UTF-8 (os.fsdecode keeps byte 0xff as U+DCFF, and
# os.fsencode turns it back into 0xff, so a name read back from the trace is the same bytes).
_SURROGATE = re.compile("[\ud800-\udfff]")


def encode_record(record: dict) -> bytes:
    """One line of JSON, valid UTF-8 for any Python strings the record holds."""
    text = dumps(record, indent=None, compact=True, keep_surrogates=True)  # a NaN or infinity as its documented string
    return (_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n").encode("utf-8")


def preview(text: str, digest: str | None) -> str:
    """The head and tail of a stored text, with a note saying how much is left out and where it is
    (digest None: a section of the model's reply, whose whole text is stored)."""
    head = PREVIEW_CHARS * 3 // 4
    tail = PREVIEW_CHARS - head
    where = (f"the whole text is kept in the run's objects/{digest[:2]}/{digest[2:]}" if digest else
             "the whole text is part of the model's reply, kept in the run's objects/")
    return (f"{text[:head]}\n\n[... {len(text) - head - tail:,} of {len(text):,} characters not shown here; "
            f"{where} ...]\n\n{text[len(text) - tail:]}")


def store_long_texts(record: dict, put_bytes) -> dict:
    """The record with every text longer than STORED_OVER_CHARS in its STORED_FIELDS moved into the
    object store (put_bytes(data) -> SHA-256): the text is replaced by its preview and
    record["stored"] lists [path, object, chars] for each, path being the keys and list indexes
    from the record down to the text. Sections of the parsed reply (model.reply) are only previewed:
    they are parts of model.response, which is stored. The given record is left as it is. Texts are
    stored as UTF-8 with lone surrogates kept ("surrogatepass"), so the text read back is the same."""
    stored = []

    def visit(value, path):
        if isinstance(value, str):
            if len(value) <= STORED_OVER_CHARS:
                return value
            if path[:2] == ["model", "reply"]:  # a section of model.response, which is stored whole
                return preview(value, None)
            digest = put_bytes(value.encode("utf-8", "surrogatepass"))
            stored.append([path, digest, len(value)])
            return preview(value, digest)
        if isinstance(value, dict):
            return {key: visit(inner, path + [key]) for key, inner in value.items()}
        if isinstance(value, list):
            return [visit(inner, path + [index]) for index, inner in enumerate(value)]
        return value

    out = dict(record)
    for name in STORED_FIELDS:
        if name in out:
            out[name] = visit(out[name], [name])
    if stored:
        out["stored"] = stored
    return out


def stored_objects(record: dict) -> list[str]:
    """The objects a record's stored texts are kept in."""
    return [digest for _, digest, _ in record.get("stored", ())]


def read_stored(objects: Path, digest: str) -> str:
    """A text kept by store_long_texts in a run's objects/ folder."""
    path = Path(objects) / digest[:2] / digest[2:]
    try:
        return path.read_bytes().decode("utf-8", "surrogatepass")
    except (OSError, UnicodeDecodeError) as error:
        raise RunError(f"cannot read the stored text {path}: {getattr(error, 'strerror', None) or error}") from None


def full_record(record: dict, objects: Path) -> dict:
    """A copy of the record with its stored texts put back in full (a version-1 record has none)."""
    if not record.get("stored"):
        return record
    copy = json.loads(json.dumps(record))
    for path, digest, _ in copy.pop("stored"):
        node = copy
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = read_stored(objects, digest)
    return copy


def full_text(record: dict, path: list, objects: Path):
    """The value at `path` in the record (keys and indexes), in full where it was stored apart."""
    for stored_path, digest, _ in record.get("stored", ()):
        if stored_path == list(path):
            return read_stored(objects, digest)
    node = record
    for key in path:
        node = node[key]
    return node


@dataclass
class TraceContents:
    records: list[dict]
    valid_bytes: int
    torn: bytes
    problem: str | None = None  # why the complete line after the records is not one (None: there is none)

    @property
    def note(self) -> str | None:
        """What a reader says of `problem` (read_trace says it on stderr)."""
        return None if self.problem is None else f"{self.problem}; the trace is read up to the line before it"


def _trace_bytes(path: Path) -> bytes:
    """The trace's bytes, read as a run folder's file is (mlab.bounded_json: never through a link or
    from a named pipe); b"" when there is none."""
    from mlab.bounded_json import MAX_TRACE_BYTES, read_bytes

    try:
        return read_bytes(Path(path), MAX_TRACE_BYTES)
    except FileNotFoundError:
        return b""
    except OSError as error:
        raise RunError(f"cannot read {path}: {error.strerror or error}") from None


def read_trace(path: Path, note: bool = True) -> TraceContents:
    """The records of a trace up to the first line that is not one: an incomplete last line (a run
    being written, or killed mid-write), or a complete line that is not a trace record (not JSON,
    past the bounds of mlab.bounded_json, not of the shape spec/trace.schema.json gives a record,
    or out of step order). What follows is returned apart, with `problem` saying which line and why
    when a complete line was refused; with `note`, that is said once on stderr, since every reader
    then goes on with the records before it (a trace may come from elsewhere: docs/security.md)."""
    from mlab.bounded_json import MAX_LINE_BYTES, loads, shape_problem

    data = _trace_bytes(path)
    records: list[dict] = []
    offset = 0
    problem = None
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            break
        try:
            record = loads(data[offset:end], what="the line", max_chars=MAX_LINE_BYTES)
        except ValueError as error:
            problem = f"it is not JSON ({error})" if not isinstance(error, (TooDeep, TooLarge)) else str(error)
        else:
            problem = shape_problem("trace", record)
            if problem is None and record["step"] != len(records) + 1:
                problem = f"its step is {record['step']}, where step {len(records) + 1} comes next"
        if problem is not None:
            problem = f"{path} line {len(records) + 1} is not a trace record: {problem}"
            break
        records.append(record)
        offset = end + 1
    contents = TraceContents(records, offset, data[offset:], problem)
    if problem is not None and note:
        note_once(contents.note)
    return contents


def repair_trace(path: Path, keep: int | None = None) -> list[dict]:
    """Keep the complete records (at most `keep`), moving the rest into trace.jsonl.torn.

    The bytes set aside are appended to the .torn file before the trace is cut, so nothing
    recorded is lost even if this is interrupted.
    """
    contents = read_trace(path, note=False)
    records, valid = contents.records, contents.valid_bytes
    if contents.problem is not None:
        note_once(f"{contents.problem}; it and the lines after it are moved to {Path(path).name}{TORN_SUFFIX}")
    if keep is not None and keep < len(records):
        data = _trace_bytes(path)
        valid = 0
        for _ in range(keep):
            valid = data.index(b"\n", valid) + 1
        records = records[:keep]
    size = len(contents.torn) + contents.valid_bytes
    if valid < size:
        from mlab.confined import open_for_append

        path = Path(path)
        rest = _trace_bytes(path)[valid:]
        with os.fdopen(open_for_append(path.parent, path.name + TORN_SUFFIX), "ab") as aside:  # never through a link
            aside.write(rest)
            aside.flush()
            os.fsync(aside.fileno())
        fd = open_for_append(path.parent, path.name)
        try:
            os.ftruncate(fd, valid)
            os.fsync(fd)
        finally:
            os.close(fd)
    return records


# Durability: each record is one write() to the trace, which the kernel holds as soon as it
# returns, so a killed harness (kill -9) loses no record it wrote. The fsync that makes records
# survive a crash of the machine itself costs more than the rest of a step on a disk; it runs
# at most once per SYNC_INTERVAL_S (after the first record of a quiet spell, at once) and when
# the trace is closed, so a machine crash loses at most the last interval's records, which a
# resume then redoes (objects a surviving record names are checked on resume as well).
SYNC_INTERVAL_S = 1.0


class TraceWriter:
    """Appends records to trace.jsonl, one write() each; fsynced at most once per
    SYNC_INTERVAL_S and at close (see above)."""

    def __init__(self, path: Path, sync_interval: float = SYNC_INTERVAL_S):
        self.path = Path(path)
        self.sync_interval = sync_interval
        self._synced_at = float("-inf")  # monotonic time of the last fsync
        self._unsynced = False
        from mlab.confined import Refused, open_for_append

        try:
            self._fd = open_for_append(self.path.parent, self.path.name)  # never through a link
        except (OSError, Refused) as error:
            raise RunError(f"cannot open {path} for writing: {getattr(error, 'strerror', None) or error}") from None

    def append(self, record: dict, sync: bool = True) -> None:
        """One record, one write(); fsynced now when the interval is due, unless `sync` is False
        (the caller syncs soon itself: the gateway, once its reply is on the way)."""
        data = encode_record(record)
        written = os.write(self._fd, data)
        while written < len(data):  # a short write on a full disk or a signal: finish the record
            written += os.write(self._fd, data[written:])
        self._unsynced = True
        if sync and time.monotonic() - self._synced_at >= self.sync_interval:
            self.sync()

    def sync(self) -> None:
        """fsync what was appended (a no-op when nothing was since the last one)."""
        if self._fd >= 0 and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = False
            self._synced_at = time.monotonic()

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.sync()
            except OSError:
                pass  # the records are written; only a machine crash could still lose them
            os.close(self._fd)
            self._fd = -1

    def __del__(self):
        self.close()
