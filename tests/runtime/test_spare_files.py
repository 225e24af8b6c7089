"""A run's object store makes its temporary files and fan-out folders ahead (mlab.snapshots.SpareFiles), so a
step that stores a new file makes neither; what it stores is the same, and nothing is left."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import mlab.snapshots as snapshots
from mlab.run.checkout import checkout
from mlab.run.folder import Run
from mlab.snapshots import KEEP, LEFTOVER_AGE_S, PREFIX


def spares_in(objects: Path) -> list[Path]:
    return sorted(p for p in objects.iterdir() if p.name.startswith(PREFIX))


def wait_until_ready(run, folders: int = 256, others: int = 0) -> None:
    """Until the thread has made its files and every fan-out folder (others: `.in-` files there
    that are not the thread's)."""
    objects = run.dir / "objects"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        made = sum(1 for p in objects.iterdir() if p.is_dir())
        if len(spares_in(objects)) == KEEP + others and made >= folders:
            return
        time.sleep(0.01)
    pytest.fail(f"the store's thread made {len(spares_in(objects))} files and {made} folders")


def write(run, version: int):
    observation = run.step("Write File", {"file_name": "train.py", "content": f"print({version})\n"})
    assert observation.status == "ok", observation.text


def test_a_step_storing_a_new_file_makes_no_file_or_folder_itself(new_run, monkeypatch, tmp_path):
    run = new_run()
    wait_until_ready(run)
    made_here = []
    real_mkstemp, real_mkdir, real_replace = snapshots.tempfile.mkstemp, Path.mkdir, os.replace

    def replace(source, target, **kwargs):
        if threading.current_thread() is threading.main_thread() and "objects" in Path(target).parts:
            made_here.append(f"rename to {target}")
        return real_replace(source, target, **kwargs)

    def mkstemp(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            made_here.append("file")
        return real_mkstemp(*args, **kwargs)

    def mkdir(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread() and "objects" in self.parts:
            made_here.append(f"folder {self.name}")
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(snapshots.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(os, "replace", replace)
    for version in range(1, 4):
        write(run, version)
        time.sleep(0.05)   # the time a model takes, in which the thread makes the next file
    monkeypatch.undo()
    assert made_here == []
    run.close()
    checkout(run.dir, 2, tmp_path / "at-2")
    assert (tmp_path / "at-2" / "train.py").read_text() == "print(2)\n"
    objects = run.dir / "objects"
    assert spares_in(objects) == []   # the files never used, and the used files' temporary names
    assert {p.stat().st_nlink for p in objects.rglob("*") if p.is_file()} == {1}


def test_a_spare_file_removed_by_someone_else_is_not_written_to(new_run, tmp_path):
    run = new_run()
    wait_until_ready(run, folders=0)
    for spare in spares_in(run.dir / "objects"):
        spare.unlink()
    write(run, 1)
    run.close()
    checkout(run.dir, 1, tmp_path / "at-1")
    assert (tmp_path / "at-1" / "train.py").read_text() == "print(1)\n"


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")   # Python 3.12+: the case tested
def test_a_forked_child_makes_its_own_files_and_leaves_the_parents(new_run):
    run = new_run()
    wait_until_ready(run, folders=0)
    before = spares_in(run.dir / "objects")
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            digest = run.store.put_bytes(b"written by the child\n")
            os._exit(0 if run.store.get_bytes(digest) == b"written by the child\n" else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert spares_in(run.dir / "objects") == before
    write(run, 1)   # the parent's own spares still serve it
    assert all(os.fstat(fd).st_nlink == 1 for fd, _ in run.store._spares._ready)


def test_empty_files_a_killed_harness_left_are_removed_when_its_run_resumes(new_run):
    run = new_run()
    write(run, 1)
    run.close()
    objects = run.dir / "objects"
    old, fresh, partial = objects / f"{PREFIX}old", objects / f"{PREFIX}fresh", objects / f"{PREFIX}partial"
    for path in (old, fresh):
        path.write_bytes(b"")
    partial.write_bytes(b"half an object")
    long_ago = time.time() - LEFTOVER_AGE_S - 60
    for path in (old, partial):
        os.utime(path, (long_ago, long_ago))
    stored = next(p for p in objects.rglob("*") if p.is_file() and not p.name.startswith(PREFIX))
    linked = objects / f"{PREFIX}linked"   # a spare linked to its object's name, not yet removed
    os.link(stored, linked)
    resumed = Run.resume(run.dir)
    try:
        wait_until_ready(resumed, others=2)
        assert not old.exists() and not linked.exists()
        assert stored.stat().st_nlink == 1
        assert fresh.exists() and partial.exists()   # maybe another store's, being written
    finally:
        resumed.close()
    assert sorted(p.name for p in spares_in(objects)) == [fresh.name, partial.name]


def test_on_a_file_system_without_hard_links_the_spare_is_renamed_into_place(new_run, monkeypatch, tmp_path):
    run = new_run()
    wait_until_ready(run, folders=0)

    def no_links(source, target, **kwargs):
        raise PermissionError(1, "Operation not permitted")   # what such a file system answers

    monkeypatch.setattr(os, "link", no_links)
    write(run, 1)
    monkeypatch.undo()
    run.close()
    checkout(run.dir, 1, tmp_path / "at-1")
    assert (tmp_path / "at-1" / "train.py").read_text() == "print(1)\n"
    assert spares_in(run.dir / "objects") == []
