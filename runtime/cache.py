"""Where the runtime keeps what it can rebuild: compiled builds and prepared data."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path


def cache_root() -> Path:
    """$MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab."""
    explicit = os.environ.get("MLAB_CACHE")
    if explicit:
        return Path(explicit).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base).expanduser() / "mlab").resolve()


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
