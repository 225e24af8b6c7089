"""Content-addressed snapshots of a workspace: each step stores only the files it changed.

`ObjectStore` keeps file contents under objects/<2 hex>/<62 hex> by SHA-256, written once;
blocks of zeros are left as holes, so a sparse file costs the store what it holds. A prepared data
file adopted at a run's set-up is the link objects/<64 hex> instead (no fan-out folder to make).
`Snapshotter` walks the workspace after each step and finds changed files cheaply: a file
whose size, mtime, inode and mode match the previous walk is not read again, and a file
modified within the last moments before a walk is re-read at the next one, so a same-size
rewrite inside one clock tick is not missed. (ctime is left out on purpose: the sandbox
changes file owners around every script, which would make every file look changed.) The result of a
walk is a delta — changed paths with their hashes, removed paths — that the trace records;
a step's full manifest is the initial manifest with the deltas of steps 1..N applied.

Objects are written to a temporary `.in-` file in the store's folder and renamed to their name,
so an object appears whole or not at all; its fan-out folder is made when the rename finds it
missing. A harness killed while writing leaves at most a temporary file, which the run removes when
it is resumed (`remove_leftovers`).
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mlab.confined import Refused, copy_keeping_holes, describe, open_binary, open_file, write_file, write_symlink
from mlab.tree import walk_tree

SYMLINK_PREFIX = "symlink:"
RACY_WINDOW_NS = 100_000_000  # generous bound on a file system's timestamp granularity
CHUNK = 1 << 20


class ObjectStore:
    """Write-once file contents named by their SHA-256."""

    def __init__(self, folder: Path, durable: bool = True):
        self.folder = Path(folder)
        self.durable = durable
        self.folder.mkdir(parents=True, exist_ok=True)
        self._refuse_links()

    def _refuse_links(self) -> None:
        """A store holds only its own folders and files: the store's folder or a fan-out folder
        that is a link (a run folder from elsewhere) would have objects written through it, so it
        is refused (Refused, a message) before anything is read or written."""
        try:
            linked = [self.folder] if self.folder.is_symlink() else [
                Path(entry.path) for entry in os.scandir(self.folder) if entry.is_symlink()]
        except OSError as problem:
            raise Refused(f"the object store {self.folder} cannot be read: {problem.strerror}") from None
        if linked:
            raise Refused(f"{linked[0]} is a link: a run's object store holds only its own folders and files, "
                          f"so this run folder is refused")

    def path(self, digest: str) -> Path:
        """Where the object `digest` is: objects/<2 hex>/<62 hex>, or objects/<64 hex> for a
        prepared data file adopted at a run's set-up (run.json version 7 on; see adopt)."""
        fanned = os.path.join(self.folder, digest[:2], digest[2:])
        if not os.path.lexists(fanned) and DIGEST.fullmatch(digest):
            flat = os.path.join(self.folder, digest)
            if os.path.lexists(flat):
                return Path(flat)
        return Path(fanned)

    def open_object(self, digest: str):
        """The object `digest` opened for reading, never through a link put in its place."""
        try:
            fd = os.open(self.path(digest), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as problem:
            if problem.errno == errno.ELOOP:
                raise Refused(f"{self.path(digest)} is a link, not a stored object") from None
            raise
        return os.fdopen(fd, "rb")

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def _temporary(self) -> tuple[int, str]:
        """(fd, path): a new empty file in the store's folder to write an object into."""
        return tempfile.mkstemp(dir=self.folder, prefix=PREFIX)

    def _commit(self, temp: str, digest: str) -> None:
        """The written file `temp` becomes the object `digest`, whole or not at all; its fan-out
        folder is made when it is missing."""
        target = self.folder / digest[:2] / digest[2:]
        try:
            os.replace(temp, target)
        except FileNotFoundError:
            target.parent.mkdir(exist_ok=True)
            os.replace(temp, target)

    def remove_leftovers(self) -> None:
        """Remove the temporary files a killed harness left: `.in-` files not written to for
        LEFTOVER_AGE_S (a file another store of the folder is writing now is left alone)."""
        before = time.time() - LEFTOVER_AGE_S
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            try:
                if (entry.name.startswith(PREFIX) and entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime < before):
                    os.unlink(entry.path)
            except OSError:
                pass   # gone meanwhile, or not ours to remove: it is only a temporary name

    def put_bytes(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        if not self.has(digest):
            fd, temp = self._temporary()
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    if self.durable:
                        handle.flush()
                        os.fsync(handle.fileno())
                self._commit(temp, digest)
            except BaseException:
                _remove(temp)
                raise
        return digest

    def put_file(self, path: Path) -> str:
        """Store a (harness-owned) file's contents, copying while hashing so it is read once."""
        with open(path, "rb") as source:
            return self._put_stream(source)

    def put_workspace_file(self, root: Path, rel: str, names: int = 1) -> str:
        """Store a workspace file read through the confined reader (never through a link);
        `names`: how many hard links it may have, all of them known to be inside root."""
        with open_binary(root, rel, max_names=names) as source:
            return self._put_stream(source)

    def _put_stream(self, source) -> str:
        first = source.read(CHUNK)
        if len(first) < CHUNK:  # the whole file (most are small): no temporary file when it is stored already
            return self.put_bytes(first)
        fd, temp = self._temporary()
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as handle:
                copy_keeping_holes(_Prefixed(first, source), handle, digest.update)   # a sparse file is stored sparse
                if self.durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            name = digest.hexdigest()
            if self.has(name):
                os.unlink(temp)
            else:
                self._commit(temp, name)
            return name
        except BaseException:
            _remove(temp)
            raise

    def adopt(self, source: str, digest: str) -> tuple[str, bool]:
        """Make the object `digest` hold the harness-owned file `source`, whose SHA-256 the caller
        knows (a prepared data file): a hard link to it named objects/<64 hex>, never read, or a
        copy when the store is on another file system. Its path, and whether it is `source`
        itself (not a copy, nor an object of those contents stored before). The caller keeps
        `source` unchanged from here (it is read-only).

        The link takes no fan-out folder: making one costs a set-up far more than a link does
        (a folder is a new inode and block, up to a millisecond on a disk busy with other writes),
        and a run's data files would each make one."""
        target = os.path.join(self.folder, digest)
        try:
            os.link(source, target)
            return target, True
        except FileExistsError:
            return target, False
        except OSError:
            pass   # another file system, or too many names: one copy
        fd, temp = self._temporary()
        try:
            with open(source, "rb") as reader, os.fdopen(fd, "wb") as writer:
                copy_keeping_holes(reader, writer)
                if self.durable:
                    writer.flush()
                    os.fsync(writer.fileno())
            os.chmod(temp, 0o444)
            self._commit(temp, digest)
        except BaseException:
            _remove(temp)
            raise
        return os.fspath(self.path(digest)), False

    def put_json(self, document) -> str:
        return self.put_bytes(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())

    def get_bytes(self, digest: str) -> bytes:
        with self.open_object(digest) as reader:
            return reader.read()

    def get_json(self, digest: str):
        return json.loads(self.get_bytes(digest))

    def copy_to(self, digest: str, root: Path, rel: str) -> None:
        """Make `rel` inside root a new file with the stored contents: a link, special file or
        folder in the way (at any level) is replaced, never written through (mlab.confined)."""
        with self.open_object(digest) as reader:
            write_file(root, rel, reader)


DIGEST = re.compile("[0-9a-f]{64}")   # an object's name when it has no fan-out folder
PREFIX = ".in-"  # a store's temporary files, which transfers skip
LEFTOVER_AGE_S = 60  # a temporary file not written to for this long is a killed harness's


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Delta:
    """What a walk found changed since the previous one."""

    changed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)

    def to_json(self) -> dict:
        return {"changed": dict(sorted(self.changed.items())), "removed": sorted(self.removed)}


def apply_delta(manifest: dict[str, str], delta: dict) -> None:
    """Apply a recorded delta ({changed, removed}) to a manifest in place."""
    for rel in delta.get("removed", ()):
        manifest.pop(rel, None)
    manifest.update(delta.get("changed", {}))


class Snapshotter:
    """Tracks one workspace's files and stores their changes in an ObjectStore."""

    def __init__(self, root: Path, store: ObjectStore, manifest: dict[str, str] | None = None):
        self.root = Path(root)
        self.store = store
        self.manifest: dict[str, str] = dict(manifest or {})
        self._stats: dict[str, tuple] = {}
        self._links: dict[str, tuple] = {}   # rel → (dev, inode) of a file that is a link to its own object
        self.refused: dict[str, str] = {}  # files of the last scan left out, and why (see scan)

    def adopt(self, placed: dict[str, str], linked: dict[str, os.stat_result] | None = None) -> None:
        """Take files the harness has just put into the workspace with known contents (rel →
        digest, each stored already) into the manifest without reading them; a file modified
        within the racy window is read at the next scan all the same. `linked`: the stat of those
        of them the harness has just made hard links to their own object (read-only data), taken
        before the link (its inode is theirs): they are not looked at again."""
        started = time.time_ns()
        root = os.fspath(self.root)
        linked = linked or {}
        for rel, digest in placed.items():
            info = linked.get(rel)
            if info is None:
                info = os.lstat(os.path.join(root, rel))
            else:
                self._links[rel] = (info.st_dev, info.st_ino)
            self.manifest[rel] = digest
            if info.st_mtime_ns < started - RACY_WINDOW_NS:
                self._stats[rel] = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
            else:   # what a scan saw under this name before (a starter file the data replaced) is gone
                self._stats.pop(rel, None)

    def take_stats(self, other: "Snapshotter") -> None:
        """Know the files as `other` (of the same workspace, renamed into place since) last saw
        them, so that files it had stored or adopted are not read again by the next scan."""
        self._stats.update(other._stats)
        self._links.update(other._links)

    def _own_object(self, rel: str, info: os.stat_result) -> bool:
        """Whether a workspace file with several names is a hard link to the stored object of
        its manifest entry (read-only data the harness linked in): its contents are then known,
        as objects are never written to."""
        digest = self.manifest.get(rel)
        key = (info.st_dev, info.st_ino)
        if digest is None or digest.startswith(SYMLINK_PREFIX):
            return False
        if self._links.get(rel) == key:
            return True
        try:
            stored = os.stat(self.store.path(digest))
        except OSError:
            return False
        if (stored.st_dev, stored.st_ino) != key:
            return False
        self._links[rel] = key
        return True

    def _walk(self):
        """(relative path, full path, lstat result) of every regular file and symlink."""
        for rel, full, info in walk_tree(self.root):
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                yield rel, full, info
            # sockets, fifos and devices are not workspace content: never opened

    def scan(self) -> Delta:
        """Store what changed since the last scan; the manifest is updated and the delta returned."""
        started = time.time_ns()
        delta = Delta()
        seen = set()
        found = list(self._walk())
        # A file with several names is stored only when all of them are in the workspace: a
        # hard link to a file outside (the run's answers) must not bring its contents in.
        names_inside: dict[tuple, int] = {}
        for _, _, info in found:
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                names_inside[(info.st_dev, info.st_ino)] = names_inside.get((info.st_dev, info.st_ino), 0) + 1
        self.refused = {}
        for rel, full, info in found:
            names = names_inside.get((info.st_dev, info.st_ino), 1) if stat.S_ISREG(info.st_mode) else 1
            if stat.S_ISREG(info.st_mode) and info.st_nlink > names:
                if self._own_object(rel, info):
                    seen.add(rel)
                    continue
                self.refused[rel] = describe(rel, info)
                continue
            seen.add(rel)
            key = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
            if self._stats.get(rel) == key and rel in self.manifest:
                continue
            if stat.S_ISLNK(info.st_mode):
                digest = SYMLINK_PREFIX + os.readlink(full)
            else:
                try:
                    digest = self.store.put_workspace_file(self.root, rel, names)
                except Refused as why:  # changed into a link or special file since the walk
                    self.refused[rel] = str(why)
                    seen.discard(rel)
                    continue
                except OSError:
                    continue  # vanished or unreadable: it will be seen at the next scan
            racy = info.st_mtime_ns >= started - RACY_WINDOW_NS
            if racy:
                self._stats.pop(rel, None)
            else:
                self._stats[rel] = key
            if self.manifest.get(rel) != digest:
                self.manifest[rel] = digest
                delta.changed[rel] = digest
        for rel in [r for r in self.manifest if r not in seen]:
            del self.manifest[rel]
            self._stats.pop(rel, None)
            self._links.pop(rel, None)
            delta.removed.append(rel)
        return delta

    def restore(self, manifest: dict[str, str]) -> None:
        """Make the workspace hold exactly `manifest` (removing other files), then track it.

        Each file is read at most once: restore_files has just checked (or written) every file's
        contents, so the files are not hashed again by a scan; their stats are taken as a scan
        takes them, a file modified within the racy window left to be read at the next scan."""
        started = time.time_ns()
        restore_files(self.store, manifest, self.root, current=None)
        self.manifest = dict(manifest)
        self._stats.clear()
        self._links.clear()
        for rel, _, info in self._walk():
            if rel in manifest and info.st_mtime_ns < started - RACY_WINDOW_NS:
                self._stats[rel] = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)


def restore_files(store: ObjectStore, manifest: dict[str, str], target: Path,
                  current: dict[str, str] | None = None) -> None:
    """Write the files of a manifest into `target`, removing files the manifest does not hold.

    current: files of target known to hold the given contents (rel → digest), taken as they are
    without being read again."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    for rel, full, info in list(walk_tree(target)):
        if not stat.S_ISDIR(info.st_mode) and rel not in manifest:
            os.unlink(full)
    for rel, digest in sorted(manifest.items()):
        if digest.startswith(SYMLINK_PREFIX):
            write_symlink(target, rel, digest[len(SYMLINK_PREFIX):])  # made, never written through
            continue
        if (current is not None and current.get(rel) == digest) or _holds(store, target, rel, digest):
            continue
        store.copy_to(digest, target, rel)


def _holds(store: ObjectStore, target: Path, rel: str, digest: str) -> bool:
    """Whether `rel` in target is already a plain file with the stored contents (read confined),
    or a hard link to the stored object itself (read-only data the harness linked in)."""
    try:
        info = os.stat(Path(target) / rel, follow_symlinks=False)
        stored = os.stat(store.path(digest))
        if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) == (stored.st_dev, stored.st_ino):
            return True
    except OSError:
        pass
    try:
        fd, info = open_file(target, rel)
    except (Refused, OSError):
        return False
    with os.fdopen(fd, "rb") as handle:
        if info.st_size != store.path(digest).stat().st_size:
            return False
        hashed = hashlib.sha256()
        while block := handle.read(CHUNK):
            hashed.update(block)
    return hashed.hexdigest() == digest


class _Prefixed:
    """A reader that gives `head` (bytes already read from `rest`) first, then the rest of `rest`."""

    def __init__(self, head: bytes, rest):
        self.head, self.rest = head, rest

    def read(self, size: int = -1) -> bytes:
        if self.head:
            block, self.head = self.head, b""
            return block
        return self.rest.read(size)
