"""What a Jinja template uses: its undeclared variables, or its syntax error; once per distinct text.

The agents of a program share most of their templates (every std agent's), and analysing a
template means importing Jinja and compiling it. Each distinct text is analysed once per
process, and the answers are kept in the user cache ($MLAB_CACHE/mlabc) under the template's
digest and the installed Jinja's identity, so a later `mlabc check` of unchanged templates
neither imports Jinja nor parses them. Without a usable cache folder every text is analysed.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from pathlib import Path

from ..resources import cache_root, store_in_cache

Analysis = frozenset[str] | tuple[int | None, str]  # the variables used, or (line, message) of the syntax error
_KEEP = 5000  # entries the cache file keeps at most (those used by this process first)


@functools.cache
def _jinja_identity() -> str | None:
    """The installed Jinja's file, size and time, without importing it."""
    spec = importlib.util.find_spec("jinja2")
    if spec is None or not spec.origin:
        return None
    try:
        stat = os.stat(spec.origin)
    except OSError:
        return None
    return hashlib.sha256(f"{spec.origin}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:16]


def _store_path() -> Path | None:
    identity = _jinja_identity()
    return cache_root() / "mlabc" / f"jinja-analysis-{identity}.json" if identity else None


@functools.lru_cache(maxsize=8)
def _stored(path: Path | None) -> dict[str, list]:
    try:
        found = json.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _decode(entry) -> Analysis | None:
    if isinstance(entry, list) and len(entry) == 2 and entry[0] == "uses" and isinstance(entry[1], list):
        return frozenset(map(str, entry[1]))
    if isinstance(entry, list) and len(entry) == 3 and entry[0] == "error" and isinstance(entry[2], str):
        return (entry[1] if isinstance(entry[1], int) else None, entry[2])
    return None


@functools.lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """The variables `text` uses, or (line, message) of its Jinja syntax error."""
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    known = _decode(_stored(_store_path()).get(key))
    if known is not None:
        return known
    import jinja2
    from jinja2 import meta

    try:
        # compiling for the analysis also finds unknown filters and tests (TemplateAssertionError)
        found: Analysis = frozenset(meta.find_undeclared_variables(_environment().parse(text)))
        entry = ["uses", sorted(found)]
    except jinja2.TemplateSyntaxError as error:
        found = (error.lineno, error.message)
        entry = ["error", error.lineno, error.message]
    _save(key, entry)
    return found


@functools.cache
def _environment():
    import jinja2

    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _save(key: str, entry: list) -> None:
    path = _store_path()
    stored = _stored(path)
    stored[key] = entry
    if path is None:
        return
    if len(stored) > _KEEP:
        for old in list(stored)[: len(stored) - _KEEP]:
            del stored[old]
    try:
        data = json.dumps(stored).encode()
    except ValueError:
        return  # not JSON-able: analysed again next time
    store_in_cache(path, data)
