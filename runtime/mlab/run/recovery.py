"""What resuming a run relies on: the lock a driving process holds on its folder, the boot that
wrote its objects (noted in the lock file), which leading trace records still have every object
they name, and the workspace manifest after any step."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from mlab.errors import RunError
from mlab.snapshots import SYMLINK_PREFIX, ObjectStore, apply_delta, hash_file
from mlab.trace import stored_objects


def lock_run(folder: Path, run_id: str) -> int:
    """An exclusive lock on the run folder, held while a process drives it (the kernel drops it
    when the process dies, so a killed run can be resumed at once)."""
    from mlab.locks import RUN_LOCK, try_lock

    fd = try_lock(folder / RUN_LOCK)
    if fd is None:
        raise RunError(f"run {run_id} is being driven by another process; wait for it to end "
                       "(or stop it) before resuming")
    return fd


EMPTY_DIGEST = hashlib.sha256(b"").hexdigest()
# The boot a run's last session ran in is the content of its lock file (mlab.locks.RUN_LOCK),
# written by the session holding the lock: see records_with_intact_objects.


def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def read_boot(folder: Path) -> str | None:
    from mlab.locks import RUN_LOCK

    from mlab.confined import Refused, read_bytes

    try:
        return read_bytes(folder, RUN_LOCK, limit=4096).decode().strip() or None
    except (OSError, UnicodeDecodeError, Refused):
        return None


def write_boot(folder: Path, lock: int) -> None:
    """Note the boot this session runs in, before it writes any object (a failure to note it only
    makes the next resume check every object)."""
    boot = boot_id()
    if boot is not None and read_boot(folder) != boot:
        try:
            os.ftruncate(lock, 0)
            os.pwrite(lock, (boot + "\n").encode(), 0)
        except OSError:
            pass


def records_with_intact_objects(store: ObjectStore, meta: dict, records: list[dict]) -> int:
    """How many leading records have every object they refer to present and intact.

    Objects are written without fsync, so after a machine crash a record may survive while an
    object it names was lost; such a record and those after it are treated as never completed.
    """
    verdicts: dict[str, bool] = {}
    # Within the boot that wrote them, the objects are in the page cache whatever happened to the
    # process (a kill -9 loses nothing written), so an object that is there with contents is
    # whole; only after a reboot may one be empty or torn, and each is read and hashed. On a
    # 10,000-step run that read is 10,000 files.
    same_boot = boot_id() is not None and read_boot(store.folder.parent) == boot_id()

    objects = str(store.folder)

    def intact(digest: str) -> bool:
        if digest not in verdicts:
            if same_boot:  # a plain stat of the name: a 10,000-step run asks for 10,000 objects
                try:
                    info = os.stat(f"{objects}/{digest[:2]}/{digest[2:]}")
                except OSError:   # a data file adopted at set-up has no fan-out folder (store.path)
                    try:
                        info = os.stat(store.path(digest))
                    except OSError:
                        info = None
                verdicts[digest] = info is not None and (info.st_size > 0 or digest == EMPTY_DIGEST)
            else:
                path = store.path(digest)
                verdicts[digest] = path.is_file() and hash_file(path) == digest
        return verdicts[digest]

    initial = meta["initial_snapshot"]
    # The initial snapshot was fsynced when the run was made, so no crash can have lost it: its
    # objects need only be there (the workspace's own files are compared with them on restore).
    # Hashing them here as well read a 100 MB workspace a second time at every resume.
    if not intact(initial) or not all(store.has(d) for d in store.get_json(initial).values()
                                       if not d.startswith(SYMLINK_PREFIX)):
        raise RunError(f"the initial snapshot of run {meta['id']} is damaged; the run cannot be resumed")
    for index, record in enumerate(records):
        named = [d for d in (record.get("snapshot") or {}).get("changed", {}).values()
                 if not d.startswith(SYMLINK_PREFIX)]
        named += [d for op, _, d in record.get("edits", []) if op == "push" and d]
        named += stored_objects(record)
        if not all(intact(d) for d in named):
            return index
    return len(records)


def manifest_at(store: ObjectStore, meta: dict, records: list[dict], step: int) -> dict[str, str]:
    """The workspace manifest after step `step` (0: as prepared)."""
    manifest = dict(store.get_json(meta["initial_snapshot"]))
    for record in records[:step]:
        apply_delta(manifest, record.get("snapshot") or {})
    return manifest


# The folders of a run folder the harness writes into or restores: each must be a folder of the run's
# own, never a link (a run folder from elsewhere whose workspace/ links to a home folder would have it
# restored, files removed and all).
RUN_FOLDERS = ("workspace", "objects", "output", "private", "build")


def check_run_folders(folder: Path) -> None:
    """RunError unless each of RUN_FOLDERS in the run folder is a real folder (not a link) or absent."""
    for name in RUN_FOLDERS:
        try:
            info = os.lstat(Path(folder) / name)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a folder"
            raise RunError(f"{Path(folder) / name} is {what}; the harness writes only into a run's own folders, "
                           "never through a link, so this run cannot be continued")
