"""Locate the data that ships with mlab (grammars/, spec/ and tasks/) and mlabc's user cache.

In a source checkout they sit at the top of the checkout, two folders above this package
(compiler/mlabc/); in an installed wheel they are packaged inside `mlabc` (see pyproject.toml).
Nothing else knows where they live.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent


class BuildWriteError(Exception):
    """The build folder cannot be written (a user-facing I/O problem): what the compiler writes.
    A build the runtime cannot use is mlab.errors.BuildError, its reading side. Defined here, with the
    other file locations, so that the CLI can catch it without importing the emitter (ruamel,
    jsonschema, jinja2)."""


def checkout_root() -> Path | None:
    """The source checkout this mlabc runs from (the folder holding pyproject.toml, compiler/ and
    runtime/), or None for an installed copy."""
    root = _HERE.parent.parent
    if (root / "pyproject.toml").is_file() and (root / "compiler" / "mlabc").is_dir():
        return root
    return None


@functools.cache
def data_dir(name: str) -> Path:
    """The folder `name` (grammars, spec or tasks), installed or in a checkout."""
    for candidate in (_HERE / name, _HERE.parent.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"mlab's {name}/ folder is missing from this installation")


def grammar_path() -> Path:
    return data_dir("grammars") / "mlab.lark"


def std_dir() -> Path:
    return data_dir("tasks") / "std"


def tasks_dir() -> Path:
    return data_dir("tasks")


@functools.cache
def spec_json(name: str) -> dict:
    """A JSON document of spec/ (e.g. 'primitives.json'), parsed once."""
    return json.loads((data_dir("spec") / name).read_text(encoding="utf-8"))


def cache_root() -> Path:
    """$MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab: what mlab can rebuild.

    Worked out once for each value of the variables it depends on (and the working folder, which
    a relative one is taken from): resolving it walks the path's links, and a report asks for it
    once a run (budgets.json's seal)."""
    names = ("MLAB_CACHE", "XDG_CACHE_HOME", "HOME")
    try:
        cwd = os.getcwd()
    except OSError:   # a removed working folder: only a relative path needs it, and fails as before
        cwd = ""
    return _resolved_cache_root(*(os.environ.get(name) for name in names), cwd)


@functools.lru_cache(maxsize=16)
def _resolved_cache_root(explicit: str | None, xdg: str | None, home: str | None, cwd: str) -> Path:
    if explicit:
        return Path(explicit).expanduser().resolve()
    base = xdg or str(Path.home() / ".cache")
    return (Path(base).expanduser() / "mlab").resolve()


def store_in_cache(entry: Path, data: bytes) -> None:
    """Write a cache entry whole or not at all (a reader never sees half a file); a cache that
    cannot be written is no error: the next run works the entry out again."""
    import tempfile  # here: a run that only reads the cache does without it

    temporary = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".new-")
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, entry)
    except OSError:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def grammar_cache_path() -> Path | None:
    """Where the grammar's parse tables are cached, or None when the cache folder cannot be made.

    The name holds the grammar's hash and the Python version, so checkouts and installs of other
    versions keep files of their own instead of rebuilding each other's; lark itself checks the
    file against the grammar, its options and its own version before it uses it."""
    digest = hashlib.sha256(grammar_path().read_bytes()).hexdigest()[:16]
    folder = cache_root() / "mlabc"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK):
        return None
    return folder / f"grammar-{digest}-py{sys.version_info[0]}.{sys.version_info[1]}.lark-cache"
