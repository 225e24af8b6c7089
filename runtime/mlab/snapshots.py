"""Content-addressed snapshots of a workspace: each step stores only the files it changed.

`ObjectStore` keeps file contents under objects/<2 hex>/<62 hex> by SHA-256, written once;
blocks of zeros are left as holes, so a sparse file costs the store what it holds.
`Snapshotter` walks the workspace after each step and finds changed files cheaply: a file
whose size, mtime, inode and mode match the previous walk is not read again, and a file
modified within the last moments before a walk is re-read at the next one, so a same-size
rewrite inside one clock tick is not missed. (ctime is left out on purpose: the sandbox
changes file owners around every script, which would make every file look changed.) The result of a
walk is a delta — changed paths with their hashes, removed paths — that the trace records;
a step's full manifest is the initial manifest with the deltas of steps 1..N applied.

`SpareFiles` makes the files and folders a run's store will need ahead, in a background thread.
On a journalled disk, making a file or a folder is the dearest thing a step does: ext4 on the
2-core machine takes 50 to 190 µs for each, where writing a trace record takes 2 to 4, so a
step that stores one new object spent more time creating its temporary file and its fan-out
folder than on everything else (bench/step.py measured 2.3x the step on a memory file system).
So a run's store takes an empty temporary file made ahead (`take`) and finds its fan-out folder
made already, while the thread makes the next file between steps, when the harness waits on the
model anyway. An object still appears under its name whole: the written file is linked there,
and the thread removes its temporary name (a rename would change the folder the thread makes
files in, and wait for it: 35 to 180 µs against 9 for the link).

The thread does nothing the store would not do itself: it makes empty `.in-` files (which
transfers skip, as they skip a store's own temporary files), the 256 fan-out folders, and
removes used `.in-` names. When it cannot (a read-only or full disk), it stops and the store
makes its own files as before. A child forked from the harness forgets the spares it inherited
(they are the parent's), and `close` removes those never used; a harness killed before that
leaves only `.in-` names, empty or second names of stored objects, which a later `SpareFiles`
of the folder removes (an empty one once it is a minute old).
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import threading
import time
import weakref
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
        self._spares = None

    def make_ahead(self) -> None:
        """Have a thread make this store's temporary files and fan-out folders ahead (SpareFiles,
        below): for the store a run writes at every step, by the run's one writer, which calls
        `close` when it is done."""
        if self._spares is None:
            self._spares = SpareFiles(self.folder)

    def __getstate__(self) -> dict:
        """A copy sent to another process (a scoring child) makes its own files: the spares and
        their thread stay with this one."""
        return {**self.__dict__, "_spares": None}

    def close(self) -> None:
        if self._spares is not None:
            self._spares.close()
            self._spares = None

    def path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def _temporary(self) -> tuple[int, str, bool]:
        """(fd, path, spare): a new empty file to write an object into, made ahead when one is."""
        spare = self._spares.take() if self._spares is not None else None
        if spare is not None and os.fstat(spare[0]).st_nlink:
            return (*spare, True)
        if spare is not None:  # removed by someone else since it was made
            os.close(spare[0])
        return (*tempfile.mkstemp(dir=self.folder, prefix=PREFIX), False)

    def _commit(self, temp: str, digest: str, spare: bool) -> None:
        """The written file `temp` becomes the object `digest`, whole or not at all. A spare is
        linked to its name and its temporary name left to the thread to remove: renaming it
        would change the folder the thread makes its files in, and wait on it."""
        target = self.path(digest)
        if spare:
            try:
                _into_fanout(os.link, temp, target)
            except FileExistsError:
                pass  # stored meanwhile by another store of the folder: the same contents
            except OSError:  # a file system without hard links
                os.replace(temp, target)
                return
            self._spares.done(temp)
            return
        _into_fanout(os.replace, temp, target)

    def _drop(self, temp: str, spare: bool) -> None:
        if spare:
            self._spares.done(temp)
        else:
            os.unlink(temp)

    def put_bytes(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        if not self.has(digest):
            fd, temp, spare = self._temporary()
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if self.durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            self._commit(temp, digest, spare)
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
        fd, temp, spare = self._temporary()
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as handle:
                copy_keeping_holes(_Prefixed(first, source), handle, digest.update)   # a sparse file is stored sparse
                if self.durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            name = digest.hexdigest()
            if self.has(name):
                self._drop(temp, spare)
            else:
                self._commit(temp, name, spare)
            return name
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise

    def put_json(self, document) -> str:
        return self.put_bytes(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())

    def get_bytes(self, digest: str) -> bytes:
        return self.path(digest).read_bytes()

    def get_json(self, digest: str):
        return json.loads(self.get_bytes(digest))

    def copy_to(self, digest: str, root: Path, rel: str) -> None:
        """Make `rel` inside root a new file with the stored contents: a link, special file or
        folder in the way (at any level) is replaced, never written through (mlab.confined)."""
        write_file(root, rel, self.path(digest))


PREFIX = ".in-"  # a store's temporary files, which transfers skip
KEEP = 4  # files kept ready: a step stores one or two new objects
FANOUT = [f"{index:02x}" for index in range(256)]
LEFTOVER_AGE_S = 60  # an empty .in- file older than this is a killed harness's spare

_open_spares: "weakref.WeakSet[SpareFiles]" = weakref.WeakSet()


class SpareFiles:
    """Empty temporary files in `folder`, and its fan-out subfolders, made by a daemon thread,
    which also removes the temporary names of the files used (`done`)."""

    def __init__(self, folder: Path, keep: int = KEEP):
        self.folder = Path(folder)
        self._keep = keep
        self._ready: list[tuple[int, str]] = []
        self._used: list[str] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        _open_spares.add(self)
        self._thread = threading.Thread(target=self._work, name="mlab-spare-files", daemon=True)
        self._thread.start()

    def take(self) -> tuple[int, str] | None:
        """An empty file opened for writing (fd, path), now the caller's; None when none is ready."""
        with self._lock:
            spare = self._ready.pop() if self._ready and not self._closed else None
        self._wake.set()
        return spare

    def done(self, path: str) -> None:
        """The temporary name of a file taken: the thread removes it when it next wakes (the file
        lives on under the object's name, or was not needed)."""
        with self._lock:
            self._used.append(path)

    def close(self) -> None:
        """Stop the thread; remove the files never taken and the names still to remove."""
        with self._lock:
            self._closed = True
            left, self._ready = self._ready, []
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        for fd, path in left:
            _discard(fd, path)
        with self._lock:
            used, self._used = self._used, []
        for path in used:
            _remove(path)

    # -- the thread ------------------------------------------------------------------------
    def _work(self) -> None:
        try:
            existing = self._remove_leftovers()
            folders = iter(name for name in FANOUT if name not in existing)
            while not self._closed:
                if self._remove_used() or self._fill():
                    continue
                name = next(folders, None)
                if name is None:
                    self._wake.wait()
                    self._wake.clear()
                    continue
                os.makedirs(self.folder / name, exist_ok=True)
        except OSError:
            return  # the store makes its own files from now on

    def _remove_used(self) -> bool:
        with self._lock:
            used, self._used = self._used, []
        for path in used:
            _remove(path)
        return bool(used)

    def _fill(self) -> bool:
        """Make one spare file when fewer than `keep` are ready: True when it made one."""
        with self._lock:
            if self._closed or len(self._ready) >= self._keep:
                return False
        fd, path = tempfile.mkstemp(dir=self.folder, prefix=PREFIX)
        with self._lock:
            if not self._closed:
                self._ready.append((fd, path))
                return True
        _discard(fd, path)
        return False

    def _remove_leftovers(self) -> set[str]:
        """Remove what a killed harness's spares left: empty files older than LEFTOVER_AGE_S (a
        file another store has just made and not yet written is left alone) and the temporary
        names of spares linked to their object's name. The names of the subfolders there are
        returned."""
        before = time.time() - LEFTOVER_AGE_S
        folders = set()
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.add(entry.name)
                if not entry.name.startswith(PREFIX) or not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
                if (info.st_size == 0 and info.st_mtime < before) or info.st_nlink > 1:
                    _remove(entry.path)
        return folders


def _into_fanout(place, temp: str, target: Path) -> None:
    """place(temp, target) (a link or a rename), making target's fan-out folder when it is not
    made yet."""
    try:
        place(temp, target)
    except FileNotFoundError:
        target.parent.mkdir(exist_ok=True)
        place(temp, target)


def _discard(fd: int, path: str) -> None:
    os.close(fd)
    _remove(path)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _forget_in_child() -> None:
    """In a forked child the spares and the thread are the parent's: none is used or removed."""
    for spares in list(_open_spares):
        spares._lock = threading.Lock()   # the parent's thread may have held either
        spares._wake = threading.Event()
        spares._ready = []
        spares._used = []
        spares._closed = True


os.register_at_fork(after_in_child=_forget_in_child)


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
        self.refused: dict[str, str] = {}  # files of the last scan left out, and why (see scan)

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
    """Whether `rel` in target is already a plain file with the stored contents (read confined)."""
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
