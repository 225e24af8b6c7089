"""How much disk the workspace holds, measured cheaply and often enough to stop a fast writer.

The disk limit bounds the workspace as a whole: starter files, data and all a
script wrote, each file counted at the larger of its apparent size and its
allocated blocks (a sparse file costs its full length: that is what reading,
copying or archiving it costs), each inode once (a hard link is not a second
copy). Two measures work
together while a script runs:

- a walk of the workspace (iterative, no recursion), exact but costly on a
  tree of many files, so it is taken no more often than its cost allows;
- the free space of the workspace's file system (one statvfs call, taken at
  every sample): the walk is taken at once when the file system lost more
  than the room that was left, whoever wrote it.

A single file cannot outgrow the room either: the script's RLIMIT_FSIZE is the
room left when it starts (see sandbox._limits).
"""
from __future__ import annotations

import os
import stat
import time

WALK_MIN_INTERVAL_S = 0.25
WALK_COST_FACTOR = 20     # a walk that took t seconds is repeated after at least 20 t


def workspace_bytes(root: str) -> int:
    """Bytes of every file, folder and link under root (each inode once): a file's apparent
    size or its allocated blocks, whichever is larger."""
    seen: set[tuple[int, int]] = set()
    total = 0
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    continue
                seen.add(key)
                total += max(info.st_blocks * 512, info.st_size if stat.S_ISREG(info.st_mode) else 0)
                if stat.S_ISDIR(info.st_mode):
                    folders.append(entry.path)
    return total


def _free_bytes(root: str) -> int | None:
    try:
        info = os.statvfs(root)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


class DiskWatch:
    """Tells the watchdog when the workspace holds more than it may."""

    def __init__(self, root: str, allowed_bytes: int, start_bytes: int) -> None:
        self.root = root
        self.allowed_bytes = allowed_bytes
        self.used_bytes = start_bytes
        self.free_at_walk = _free_bytes(root)
        self.next_walk = 0.0
        self.next_urgent = 0.0

    def over(self, now: float) -> bool:
        """Whether the workspace holds more than allowed (measured again if it may have grown)."""
        free = _free_bytes(self.root)
        room = self.allowed_bytes - self.used_bytes
        # Free space lost since the last walk beyond the room it left: someone wrote fast.
        urgent = free is not None and self.free_at_walk is not None and self.free_at_walk - free > room
        if now >= self.next_walk or (urgent and now >= self.next_urgent):
            started = time.perf_counter()
            self.used_bytes = workspace_bytes(self.root)
            cost = time.perf_counter() - started
            self.next_walk = now + max(WALK_MIN_INTERVAL_S, WALK_COST_FACTOR * cost)
            self.next_urgent = now + 5 * cost
            self.free_at_walk = free
        return self.used_bytes > self.allowed_bytes
