"""A pool of unprivileged uids, one per script running at once, so that per-uid limits count per script.

The kernel's process limit (RLIMIT_NPROC) counts every task of a uid. Were all
sandboxes to share one uid, a fork bomb in one run would use up the processes
of every run beside it. A root harness therefore leases each script its own
uid (and a group of the same number) for the script's duration: a lock file
per uid, held with flock, keeps parallel mlab processes from taking the same
one, and the kernel drops the lock when a harness dies. When every uid of the
pool is taken the script shares the fallback uid (nobody), as before.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from mlab.locks import try_lock

POOL_FIRST_UID = 0x6D6C0000   # 1835794432: far above the uids and subuid ranges systems hand out
POOL_SIZE = 256
FALLBACK_UID = 65534          # nobody
FALLBACK_GID = 65534          # nogroup
LOCK_FOLDERS = ("/run/mlab-sandbox-uids", "/tmp/mlab-sandbox-uids")


def _lock_folder() -> Path | None:
    """A folder only root can change, holding one lock file per uid of the pool."""
    for folder in map(Path, LOCK_FOLDERS):
        try:
            folder.mkdir(mode=0o755, exist_ok=True)
            info = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return folder
    return None


class UidLease:
    """A uid (and gid) of the pool for one script; release() hands it back."""

    def __init__(self, uid: int, gid: int, lock_fd: int | None) -> None:
        self.uid = uid
        self.gid = gid
        self.lock_fd = lock_fd

    @property
    def pooled(self) -> bool:
        return self.lock_fd is not None

    @classmethod
    def take(cls, first: int = POOL_FIRST_UID, size: int = POOL_SIZE) -> UidLease:
        """The first free uid of the pool, or the shared fallback when none is free."""
        folder = _lock_folder()
        if folder is not None:
            start = os.getpid() % size   # parallel harnesses start their search apart
            for offset in range(size):
                uid = first + (start + offset) % size
                try:
                    fd = try_lock(folder / f"{uid}.lock")
                except OSError:
                    break
                if fd is not None:
                    return cls(uid, uid, fd)
        return cls(FALLBACK_UID, FALLBACK_GID, None)

    def release(self) -> None:
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None
