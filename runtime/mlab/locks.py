"""Exclusive locks on files: held by the process that drives a run or a sweep, dropped by the
kernel when that process dies (so a killed run can be resumed at once)."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

RUN_LOCK = ".lock"  # in a run folder: held while a process drives the run


def try_lock(path: Path) -> int | None:
    """An exclusive lock on `path` (created if missing; a link or special file there is replaced,
    never followed: the lock file of a run folder is written to): its descriptor, to close to
    release it, or None when another process holds it."""
    from mlab.confined import open_for_append

    path = Path(path)
    fd = open_for_append(path.parent, path.name)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def run_is_busy(folder: Path) -> bool:
    """Whether a process holds the run's lock (it is being driven now)."""
    path = Path(folder) / RUN_LOCK
    if not path.is_file() or path.is_symlink():
        return False
    fd = try_lock(path)
    if fd is None:
        return True
    os.close(fd)
    return False
