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
from pathlib import Path


def cache_root() -> Path:
    """$MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab: the rule the compiler's cache
    of parse tables follows too, so both are one function."""
    from mlabc.shared import cache_root as shared_rule

    return shared_rule()


def builds_cache() -> Path:
    return cache_root() / "builds"


def data_cache() -> Path:
    return cache_root() / "data"


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in chunks so large files cost no memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


# -- validated build artifacts --------------------------------------------------------------

@functools.cache
def _schema_digest(kind: str) -> str:
    from mlabc.shared import data_dir

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
    from mlabc.shared import store_in_cache

    store_in_cache(_entry(kind, digest), data)
