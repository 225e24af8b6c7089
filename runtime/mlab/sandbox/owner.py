"""Lending the workspace to the unprivileged sandbox uid for one script, then taking it back.

When mlab runs as root, scripts run as an unprivileged uid (so that process
limits count and the script holds no root powers). That uid must be able to
write the workspace. We chown the workspace's files to it for the duration of
the script and restore every file's recorded owner afterwards (new files get
the workspace folder's owner). A shared group was the alternative, but files
that the harness writes between scripts (mode 0644) would then not be writable
by the script without changing the harness's umask everywhere.

Read-only files are not lent: they stay owned by the harness, so even without
bubblewrap the script cannot write them in place. Symlinks are changed with
lchown and never followed, and hard-linked files are not lent, so nothing the
script planted can redirect the ownership change to a file outside the
workspace.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from mlab.tree import walk_tree


class WorkspaceLoan:
    """Hands a workspace tree to uid:gid and gives it back on restore()."""

    def __init__(self, workspace: Path, uid: int, gid: int, keep: set[str]) -> None:
        self.workspace = str(workspace)
        self.uid = uid
        self.gid = gid
        self.keep = keep
        self.owners: dict[str, tuple[int, int]] = {}
        top = os.lstat(self.workspace)
        self.default_owner = (top.st_uid, top.st_gid)

    def _walk(self):
        yield self.workspace
        for _, path, _ in walk_tree(self.workspace):  # iterative: a script may nest folders thousands deep
            yield path

    def lend(self) -> None:
        """Chown every file, folder and link (except kept ones) to the sandbox uid."""
        for path in self._walk():
            if path in self.keep:
                continue
            try:
                info = os.lstat(path)
                if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
                    # A hard link shares its inode with a file elsewhere: lending it
                    # would lend that file too (and the script may have planted it).
                    continue
                if (info.st_uid, info.st_gid) != (self.uid, self.gid):
                    self.owners[path] = (info.st_uid, info.st_gid)
                    os.chown(path, self.uid, self.gid, follow_symlinks=False)
            except OSError:
                continue

    def restore(self) -> None:
        """Give every path back to its recorded owner; new paths to the workspace's owner."""
        for path in self._walk():
            try:
                info = os.lstat(path)
                if info.st_uid != self.uid and info.st_gid != self.gid:
                    continue
                owner = self.owners.get(path, self.default_owner)
                os.chown(path, *owner, follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    # A set-id program the script left must not become one of the harness's.
                    os.chmod(path, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
            except OSError:
                continue
