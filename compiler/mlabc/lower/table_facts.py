"""What the data checks need of a bundled CSV table, worked out once per content.

The checks of a `from csv` source (data_files.py: E510, E511, E512, E509) read the whole table;
house-price's 2,930 rows took a one-file `mlabc check` 20 ms of its ~130. The answers are kept in
the user cache ($MLAB_CACHE/mlabc/tables) under the SHA-256 of the file's bytes and of this
module's code, so a later check of the same bytes reads the file, hashes it and loads a small
JSON document instead of parsing every row; a changed byte, or changed code here, works them out
afresh. The id column's answer is kept per column name (another variant may name another). Without
a usable cache folder nothing is stored and every check parses the table.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
from pathlib import Path

from ..resources import cache_root, store_in_cache


@functools.cache
def _code_digest() -> bytes:
    return hashlib.sha256(Path(__file__).read_bytes()).digest()


class TableFacts:
    """The facts of one table's bytes: `utf8_error` (line, column, byte) or None; `header` (names
    stripped; None when the file is empty); `has_rows` (a row with a non-blank cell); and, per id
    column, its first problem (`id_problem`)."""

    def __init__(self, raw: bytes, entry: Path | None):
        self._raw, self._entry, self._rows = raw, entry, None
        stored = _load(entry)
        if stored is None:
            stored = self._work_out()
            self._save(stored)
        self._facts = stored

    @property
    def utf8_error(self) -> tuple[int, int, int] | None:
        found = self._facts["utf8_error"]
        return tuple(found) if found else None

    @property
    def header(self) -> list[str] | None:
        return self._facts["header"]

    @property
    def has_rows(self) -> bool:
        return self._facts["has_rows"]

    def id_problem(self, column: str) -> list | None:
        """["empty", line] or ["repeated", value, first line, line] of the first bad value of the
        column named `column` (which the header has), or None when every value is there once."""
        known = self._facts["ids"]
        if column not in known:
            known[column] = _id_problem(self._parsed()[1], self._facts["header"].index(column))
            self._save(self._facts)
        return known[column]

    def _parsed(self) -> tuple[list[str] | None, list[list[str]]]:
        if self._rows is None:
            rows = csv.reader(io.StringIO(self._raw.decode("utf-8-sig")))
            header = next(rows, None)
            self._rows = (header, list(rows))
        return self._rows

    def _work_out(self) -> dict:
        facts = {"utf8_error": None, "header": None, "has_rows": False, "ids": {}}
        try:
            self._raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raw, start = self._raw, error.start
            line_start = raw.rfind(b"\n", 0, start) + 1
            facts["utf8_error"] = [raw.count(b"\n", 0, start) + 1,
                                   len(raw[line_start:start].decode("utf-8", errors="replace")) + 1, raw[start]]
            return facts
        header, rows = self._parsed()
        if header:
            facts["header"] = [name.strip() for name in header]
            facts["has_rows"] = any(any(cell.strip() for cell in row) for row in rows)
        return facts

    def _save(self, facts: dict) -> None:
        if self._entry is not None:
            store_in_cache(self._entry, json.dumps(facts).encode())


def _id_problem(rows: list[list[str]], at: int) -> list | None:
    first: dict[str, int] = {}
    for line, row in enumerate(rows, 2):
        if not any(cell.strip() for cell in row):
            continue
        value = row[at].strip() if at < len(row) else ""
        if not value:
            return ["empty", line]
        if value in first:
            return ["repeated", value, first[value], line]
        first[value] = line
    return None


def _load(entry: Path | None) -> dict | None:
    if entry is None:
        return None
    try:
        found = json.loads(entry.read_bytes())
    except (OSError, ValueError):
        return None
    keys = {"utf8_error", "header", "has_rows", "ids"}
    return found if isinstance(found, dict) and set(found) == keys and isinstance(found["ids"], dict) else None


def table_facts(path: Path) -> TableFacts | None:
    """The facts of the table at `path`, from the cache when its bytes were seen before; None when
    the file cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    key = hashlib.sha256(_code_digest() + raw).hexdigest()
    try:
        entry: Path | None = cache_root() / "mlabc" / "tables" / key[:2] / f"{key}.json"
    except (OSError, RuntimeError):  # no home folder to put the cache in
        entry = None
    return TableFacts(raw, entry)
