"""Walking and removing folder trees without recursion, whatever their depth.

A script can make thousands of nested folders; os.walk, Path.rglob and shutil.rmtree recurse
once per level in Python 3.11 and raise RecursionError past about a thousand, which would fail
every later snapshot, workspace loan and restore of the run. These walk with an explicit stack
instead. Symbolic links are reported, never followed. Names are str as os.fsdecode gives them
(bytes that are not UTF-8 become lone surrogates, which os.fsencode turns back into the same
bytes), so a name read from the trace designates the same file.
"""
from __future__ import annotations

import os
import stat
from typing import Iterator


def walk_tree(root: str | os.PathLike) -> Iterator[tuple[str, str, os.stat_result]]:
    """(relative POSIX path, full path, lstat) of everything under `root`, a folder before its
    contents; entries that vanish or cannot be read while walking are skipped."""
    stack = [("", os.fspath(root))]
    while stack:
        prefix, folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield rel, entry.path, info
            if stat.S_ISDIR(info.st_mode):
                stack.append((rel + "/", entry.path))


def file_identity(path: str | os.PathLike) -> tuple[int, int, int, int, int] | None:
    """Which file a path names now, and which version of it: (device, inode, size, mtime in ns,
    mode) of the path itself (a link is not followed), or None when nothing is there."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove a folder and everything in it (what shutil.rmtree does, at any depth)."""
    path = os.fspath(path)
    for _, full, info in reversed(list(walk_tree(path))):  # contents before their folder
        try:
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(full)
            else:
                os.unlink(full)
        except FileNotFoundError:
            pass
    os.rmdir(path)
