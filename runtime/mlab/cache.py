"""Where the runtime keeps what it can rebuild: compiled builds, prepared data, and the build
artifacts it has already read and validated (recall / remember).

Reading a build's task.yaml with ruamel (pure Python) and validating every artifact against its
schema was most of what `mlab list` and a run's start cost. A document that was read from a file
whose SHA-256 the build's manifest records, and that matched its schema, is stored as JSON under
that digest and the schema's own digest: the next process reads it with the C JSON parser and
validates nothing. Since the key is the file's content, an edited or foreign artifact never finds
an entry and is read and validated afresh (mlab.build refuses it first when it differs from the
manifest); a changed schema misses every entry made under the old one.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path


def cache_root() -> Path:
    """$MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab: the rule the compiler's cache
    of parse tables follows too, so both are one function."""
    from mlabc.resources import cache_root as shared_rule

    return shared_rule()


def builds_cache() -> Path:
    return cache_root() / "builds"


def data_cache() -> Path:
    return cache_root() / "data"


REMEMBERED_FROM = 8 << 20   # a file this large has its SHA-256 remembered (cache_root()/hashes)
SETTLED_S = 2.0             # ... once its last change is this old (timestamps are a clock tick coarse)


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in chunks so large files cost no memory.

    A large file's digest is remembered under its device, inode, size, mtime and ctime (which
    no process can set back: any write or change of mode moves it), so a task's local data source is
    read once, not at every run's set-up (its preparation key hashes it)."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    entry = None
    if info is not None and info.st_size >= REMEMBERED_FROM and settled(info):
        entry = remembered_entry(stat_key(info))
        known = recall_digest(entry)
        if known is not None:
            return known
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    if entry is not None:
        remember_digest(entry, digest.hexdigest())
    return digest.hexdigest()


def settled(info: os.stat_result) -> bool:
    """Whether a file's last change is old enough for its stat to name its contents."""
    return time.time() - info.st_ctime > SETTLED_S


def stat_key(info: os.stat_result) -> str:
    """A file's device, inode, size, mtime and ctime: any write or change of mode moves it."""
    return f"{info.st_dev}\0{info.st_ino}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"


def remembered_entry(key: str) -> Path:
    """Where a digest remembered under `key` (stat_key, or a folder's list of them) is kept."""
    name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()
    return cache_root() / "hashes" / name[:2] / name


def recall_digest(entry: Path) -> str | None:
    try:
        known = entry.read_text(encoding="ascii")
    except (OSError, ValueError):
        return None
    return known if len(known) == 64 else None


def remember_digest(entry: Path, digest: str) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=entry.parent, prefix=".in-")
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(digest)
        os.replace(temp, entry)
    except OSError:
        pass   # a cache that cannot be written: the file is hashed again next time


# -- validated build artifacts --------------------------------------------------------------

@functools.cache
def _schema_digest(kind: str) -> str:
    from mlabc.resources import data_dir

    try:
        return hashlib.sha256((data_dir("spec") / f"{kind}.schema.json").read_bytes()).hexdigest()[:16]
    except OSError:
        return "none"


def _entry(kind: str, digest: str) -> Path:
    return cache_root() / "validated" / digest[:2] / f"{kind}-{_schema_digest(kind)}-{digest}.json"


def recall(kind: str, digest: str) -> dict | None:
    """The document of kind `kind` (a schema name of spec/) stored for a file of SHA-256 `digest`."""
    try:
        document = json.loads(_entry(kind, digest).read_bytes())
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def remember(kind: str, digest: str, document: dict) -> None:
    """Store a document that matched its schema; one that JSON cannot hold exactly is not stored."""
    try:
        text = json.dumps(document, ensure_ascii=False)
        if json.loads(text) != document:  # e.g. keys that are not strings: read it from the file each time
            return
    except (TypeError, ValueError, RecursionError):
        return
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a text UTF-8 cannot hold (a lone surrogate)
        return
    from mlabc.resources import store_in_cache

    store_in_cache(_entry(kind, digest), data)
