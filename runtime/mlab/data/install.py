"""Install a prepared data variant into a new run without copying or reading what need not be.

A prepared variant's public files are hashed once, by the first run set up from it (digests.json in
the cache folder, with each file's size and mtime). A run's object store then takes each file as a
hard link to the cache file (made read-only), its digest the recorded one; a read-only file of a
sandboxed run is linked into the workspace as well, and any other file is copied once. So setting
up a run costs the same whatever the size of its read-only data, and one copy of its writable data.
Links are made only where scripts run in bubblewrap's sandbox, which binds read-only files
read-only (and runs them as a uid that does not own them): a script outside it could write
through the link into the cache.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Collection

from mlab.cache import file_sha256
from mlab.confined import open_binary, write_file
from mlab.data.prepare import PreparedData, copy_tree, debris_name
from mlab.snapshots import ObjectStore
from mlab.tree import walk_tree

DIGESTS = "digests.json"   # each public file's SHA-256, size and mtime


def install_run_data(prepared: PreparedData, workspace: Path, private: Path, store: ObjectStore,
                     link=None, stored: Collection[str] = ()) -> tuple[dict[str, str], dict[str, os.stat_result]]:
    """Put a prepared variant's public files into a new run's workspace and its private files into
    private/ (as mlab.data.prepare.install_data does, with the run's store).

    Each public file's contents reach the store without being read: a hard link to the cache file
    (made read-only first), or one copy when the store is on another file system; its digest is the
    recorded one. A public file for which `link(rel)` holds (a read-only file of a sandboxed run) is
    then a hard link to that object in the workspace too; any other is copied once, keeping the cache
    file's mtime so that the first snapshot need not read it again. Returns rel → digest of each, and
    rel → stat of those linked to their object (the walk's stat of the cache file where the object
    is that file: no second stat). `stored`: digests the store holds already (the starter's files):
    a file of those contents is copied, not linked to an object that scripts may not read."""
    copy_tree(prepared.private, private)
    folders: list[str] = []
    found = public_digests(prepared.folder, folders)
    for folder in folders:
        (Path(workspace) / folder).mkdir(parents=True, exist_ok=True)
    placed, linked = {}, {}
    public, root = os.fspath(prepared.public), os.fspath(workspace)
    for rel, (digest, info) in found.items():
        source, target = os.path.join(public, rel), os.path.join(root, rel)
        placed[rel] = digest
        if digest in stored:   # a starter file's: that object is the harness's own (mode 600), never shared
            _copy(source, target, info)
            continue
        kept, is_source = store.adopt(source, digest)
        if link is not None and link(rel):
            try:
                _link_replacing(kept, target)
                linked[rel] = info if is_source else os.lstat(target)
                continue
            except OSError:
                pass   # too many names, or a file system without links: a copy
        _copy(source, target, info)
    return placed, linked


def _copy(source: str, target: str, info: os.stat_result) -> None:
    """A copy of a data file in place of whatever the workspace has of that name, with its mtime."""
    _remove_file(target)   # a starter file of the same name: the data's file replaces it
    shutil.copyfile(source, target)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


def _link_replacing(stored: str, target: str) -> None:
    try:
        os.link(stored, target)
    except FileExistsError:   # a starter file of the same name: the data's file replaces it
        _remove_file(target)
        os.link(stored, target)


def _remove_file(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def public_digests(folder: Path, folders: list[str] | None = None) -> dict[str, tuple[str, os.stat_result]]:
    """The SHA-256 and stat of each public file of a prepared folder (debris left out), the digest
    as recorded in its digests.json by the first run set up from it; a file missing from the record,
    or whose size or mtime differ from it (changed in place), is hashed now and the record written
    again. Every write permission is taken off each file (a link to it in a run must not open it).

    One stat a file, from the folder walk: a set-up pays this for every data file. `folders`, when
    given, receives the public folders' names (debris left out), parents first."""
    record_path = Path(folder) / DIGESTS
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    public = Path(folder) / "public"
    found, fresh, changed = {}, {}, False
    for name, full, info in sorted(walk_tree(public)):
        if debris_name(name):
            continue
        if stat.S_ISDIR(info.st_mode) and folders is not None:
            folders.append(name)
        if not stat.S_ISREG(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o222:
            os.chmod(full, mode & ~0o222)
            info = os.stat(full)
        known = record.get(name)
        if isinstance(known, list) and len(known) == 3 and known[1] == info.st_size and known[2] == info.st_mtime_ns:
            fresh[name] = known
        else:
            fresh[name] = [file_sha256(Path(full)), info.st_size, info.st_mtime_ns]
            changed = True
        found[name] = fresh[name][0], info
    if changed or len(fresh) != len(record):
        try:
            fd, temp = tempfile.mkstemp(dir=folder, prefix=".digests-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(fresh, handle, sort_keys=True)
            os.replace(temp, record_path)
        except OSError:
            pass   # a cache the harness cannot write: the digests are made again next time
    return found


def unshare_files(workspace: Path) -> None:
    """Make every file of the workspace that shares its inode (read-only data linked to the run's
    store and the prepared cache) a copy of its own, for a run resumed where scripts run without the
    sandbox: nothing binds those files read-only there, and a script could write through the link."""
    for folder, _, names in os.walk(workspace):
        for name in names:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                # through the one confined writer: the agent's links in the workspace are replaced,
                # never written through (a second name beside the file could be one)
                with open_binary(workspace, os.path.relpath(path, workspace), max_names=info.st_nlink) as reader:
                    write_file(workspace, os.path.relpath(path, workspace), reader)
                os.chmod(path, stat.S_IMODE(info.st_mode))
                os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
