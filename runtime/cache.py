"""Where the runtime keeps what it can rebuild: compiled builds and prepared data."""
from __future__ import annotations

import hashlib
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
