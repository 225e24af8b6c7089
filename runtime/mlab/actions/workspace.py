"""Confine agent paths to the workspace and enforce the task's read-only patterns.

Every path an action names goes through `Workspace.resolve`: it is joined to the workspace,
normalised and its symbolic links resolved; whatever lands outside the workspace is refused.
Read-only patterns (fnmatch, relative to the workspace) are matched against the resolved
path, so `train.csv`, `./train.csv`, `a/../train.csv`, its absolute path and a symlink to it
are all the same file. Hard links to a read-only file are caught by inode.
"""
from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Iterable

from mlab.tree import walk_tree


class PathRefused(Exception):
    """A path an action may not use; the message is shown to the agent as the observation."""


def is_utf8_text(text: str) -> bool:
    """Whether `text` can be written as UTF-8: a lone surrogate (a model's "\\udcff", or a file name
    os.fsdecode kept from bytes that are not UTF-8) cannot. Actions refuse such names as paths."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def normalise_pattern(pattern: str) -> str:
    """A read-only pattern without a leading './' or trailing '/'."""
    text = pattern.replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


class Workspace:
    """The folder the agent works in, with its read-only patterns."""

    def __init__(self, root: Path, read_only: Iterable[str] = ()):
        self.root = Path(os.path.realpath(root))
        self.read_only = tuple(normalise_pattern(p) for p in read_only)

    # -- confinement -------------------------------------------------------------------
    def resolve(self, name: object, argument: str = "path") -> Path:
        """The real path `name` designates inside the workspace; PathRefused if it leaves it."""
        if not isinstance(name, str):
            raise PathRefused(f"{argument} must be a text path relative to the workspace, "
                              f"not {type(name).__name__}")
        text = name.strip()
        if not text:
            raise PathRefused(f"{argument} is empty; give a path relative to the workspace, e.g. '.'")
        if "\x00" in text:
            raise PathRefused(f"{argument} {name!r} contains a NUL character")
        if not is_utf8_text(text):
            raise PathRefused(f"{argument} {name!r} is not valid UTF-8 text (it holds a lone surrogate such "
                              f"as \\udcff); name files with ordinary characters")
        given = Path(text)
        real = Path(os.path.realpath(given if given.is_absolute() else self.root / given))
        if real == self.root or self.root in real.parents:
            return real
        if given.is_absolute():
            raise PathRefused(f"{argument} {name!r} is outside the workspace; use a path relative "
                              f"to the workspace (your current directory), e.g. 'train.py'")
        lexical = os.path.normpath(self.root / given)
        if lexical != str(self.root) and not lexical.startswith(str(self.root) + os.sep):
            raise PathRefused(f"{argument} {name!r} leads outside the workspace; only files "
                              f"inside the workspace can be used")
        raise PathRefused(f"{argument} {name!r} is a symbolic link (or passes through one) that "
                          f"points outside the workspace; only files inside the workspace can be used")

    def relative(self, real: Path) -> str:
        """The workspace-relative POSIX spelling of a resolved path ('.' for the root)."""
        rel = os.path.relpath(real, self.root)
        return PurePosixPath(*Path(rel).parts).as_posix() if rel != "." else "."

    # -- read-only ---------------------------------------------------------------------
    def read_only_pattern(self, real: Path) -> str | None:
        """The read-only pattern that covers a resolved path (itself or a folder above it)."""
        return self._pattern_of(self.relative(real))

    def _pattern_of(self, rel: str) -> str | None:
        if rel == "." or not self.read_only:
            return None
        parts = rel.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pattern in self.read_only:
            if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
                return pattern
        return None

    def is_read_only(self, rel: str) -> bool:
        """Whether a workspace-relative path is covered by a read-only pattern (the path's text
        normalised as `relative` would, without touching the file system: a run's set-up asks
        this of every data file)."""
        if not self.read_only:
            return False
        text = os.path.normpath(rel)
        if os.path.isabs(text) or text == ".." or text.startswith("../"):
            return self.read_only_pattern(self.root / rel) is not None
        return self._pattern_of(text) is not None

    def read_only_files(self) -> list[Path]:
        """Every file of the workspace covered by a read-only pattern."""
        found = []
        for _, full, info in walk_tree(self.root):
            path = Path(full)
            if not stat.S_ISDIR(info.st_mode) and self.read_only_pattern(path) is not None:
                found.append(path)
        return sorted(found)

    def _hard_link_to_read_only(self, real: Path) -> Path | None:
        try:
            info = real.stat()
        except OSError:
            return None
        if info.st_nlink < 2 or not self.read_only:
            return None
        for protected in self.read_only_files():
            other = protected.stat()
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return protected
        return None

    def writable(self, name: object, argument: str = "file_name") -> Path:
        """The resolved path of a file the agent may write; PathRefused otherwise."""
        real = self.resolve(name, argument)
        if real == self.root or real.is_dir():
            raise PathRefused(f"{argument} {name!r} is a folder, not a file")
        pattern = self.read_only_pattern(real)
        if pattern is not None:
            raise PathRefused(f"{self.relative(real)} is read-only in this task (pattern "
                              f"{pattern!r}); write your changes to another file instead")
        linked = self._hard_link_to_read_only(real)
        if linked is not None:
            raise PathRefused(f"{self.relative(real)} is a hard link to the read-only file "
                              f"{self.relative(linked)}; write to another file instead")
        return real

    def readable_file(self, name: object, argument: str = "file_name") -> Path:
        """The resolved path of an existing file the agent may read; PathRefused otherwise."""
        real = self.resolve(name, argument)
        if real.is_dir():
            raise PathRefused(f"{argument} {name!r} is a folder, not a file; use List Files for folders")
        if not real.is_file():
            raise PathRefused(f"{argument} {name!r} does not exist in the workspace"
                              + self._nearby_hint(real))
        return real

    def _nearby_hint(self, real: Path) -> str:
        parent = real.parent
        if not parent.is_dir():
            return ""
        import difflib

        names = sorted(p.name for p in parent.iterdir())
        close = difflib.get_close_matches(real.name, names, n=3, cutoff=0.6)
        return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
