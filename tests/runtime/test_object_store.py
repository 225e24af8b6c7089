"""A run's object store keeps every file a step stores, whole, on any file system, and leaves no
temporary file behind (mlab.snapshots.ObjectStore)."""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from mlab.run.checkout import checkout
from mlab.run.folder import Run
from mlab.snapshots import LEFTOVER_AGE_S, PREFIX, ObjectStore

FILES = 40   # enough new objects in one step that they land in many fan-out folders


def temporaries_in(objects: Path) -> list[Path]:
    return sorted(p for p in objects.iterdir() if p.name.startswith(PREFIX))


def write(run, version: int):
    observation = run.step("Write File", {"file_name": "train.py", "content": f"print({version})\n"})
    assert observation.status == "ok", observation.text


def test_on_a_file_system_without_hard_links_every_file_a_step_stores_is_kept(new_run, monkeypatch, tmp_path):
    def no_links(source, target, **kwargs):
        raise PermissionError(1, "Operation not permitted")   # what such a file system answers

    monkeypatch.setattr(os, "link", no_links)
    run = new_run()
    for index in range(FILES):   # files a script left, stored by the next step's snapshot
        (run.workspace.root / f"made-{index}.txt").write_text(f"file {index} of the step\n")
    write(run, 1)
    write(run, 2)
    run.close()
    monkeypatch.undo()
    checkout(run.dir, 1, tmp_path / "at-1")
    kept = {p.name for p in (tmp_path / "at-1").glob("made-*.txt")}
    assert kept == {f"made-{index}.txt" for index in range(FILES)}
    for index in range(FILES):
        assert (tmp_path / "at-1" / f"made-{index}.txt").read_text() == f"file {index} of the step\n"
    assert (tmp_path / "at-1" / "train.py").read_text() == "print(1)\n"
    checkout(run.dir, 2, tmp_path / "at-2")
    assert (tmp_path / "at-2" / "train.py").read_text() == "print(2)\n"
    assert temporaries_in(run.dir / "objects") == []


def test_a_run_leaves_one_name_per_object_and_no_temporary_file(new_run, tmp_path):
    run = new_run()
    for version in range(1, 4):
        write(run, version)
    run.close()
    objects = run.dir / "objects"
    assert temporaries_in(objects) == []
    # the only objects with other names are the prepared data's, linked from the cache read-only
    # (named objects/<SHA-256>, without a fan-out folder)
    data = set(json.loads((run.dir / "workspace" / ".." / "objects").joinpath(
        run.meta["initial_snapshot"][:2], run.meta["initial_snapshot"][2:]).read_text()).values())
    shared = [p for p in objects.rglob("*") if p.is_file() and p.stat().st_nlink > 1]
    assert shared and all((p.name if p.parent == objects else p.parent.name + p.name) in data and p.stat().st_mode & 0o222 == 0 for p in shared)
    checkout(run.dir, 2, tmp_path / "at-2")
    assert (tmp_path / "at-2" / "train.py").read_text() == "print(2)\n"


def test_temporary_files_a_killed_harness_left_are_removed_when_its_run_resumes(new_run):
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
    resumed = Run.resume(run.dir)
    try:
        assert not old.exists() and not partial.exists()
        assert fresh.exists()   # maybe another store's, being written
        write(resumed, 2)
    finally:
        resumed.close()
    assert [p.name for p in temporaries_in(objects)] == [fresh.name]


def test_a_store_whose_fan_out_folder_is_a_link_is_refused_before_anything_is_written(tmp_path):
    """A run folder from elsewhere whose objects/ab is a link to a host folder: writing an object
    there would land outside the run, so the store is refused with a message, and nothing is written."""
    from mlab.confined import Refused

    outside = tmp_path / "outside"
    outside.mkdir()
    objects = tmp_path / "run" / "objects"
    objects.mkdir(parents=True)
    digest = hashlib.sha256(b"payload").hexdigest()
    (objects / digest[:2]).symlink_to(outside)
    with pytest.raises(Refused, match="is a link"):
        ObjectStore(objects).put_bytes(b"payload")
    assert list(outside.iterdir()) == []


def test_an_object_that_is_a_link_is_never_read_through(tmp_path):
    """An object file replaced by a link to a host file is refused, never copied into a workspace
    (a resume or checkout of a run folder from elsewhere) nor shown by the viewer's diff."""
    from mlab.confined import Refused
    from mlab.viewer.diff import file_change

    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n")
    store = ObjectStore(tmp_path / "objects")
    digest = store.put_bytes(b"harmless\n")
    store.path(digest).unlink()
    store.path(digest).symlink_to(secret)
    with pytest.raises(Refused, match="is a link"):
        store.get_bytes(digest)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with pytest.raises(Refused):
        store.copy_to(digest, workspace, "data.txt")
    assert not (workspace / "data.txt").exists()
    shown = file_change(store, "data.txt", None, digest)
    assert shown.diff is None and "is a link" in shown.note and "host secret" not in repr(shown)
