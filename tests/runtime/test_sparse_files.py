"""Sparse files: the disk limit counts their apparent size, and the snapshot store keeps them sparse
(issue 25: 1.86 GB apparent, 4 KB allocated, passed the limit and was stored at full size)."""
from __future__ import annotations

import hashlib
import os

from conftest_sandbox import MiB, folders, mode  # noqa: F401

from mlab.sandbox.disk import workspace_bytes
from mlab.snapshots import ObjectStore, Snapshotter, restore_files


def sparse(path, apparent: int, data: bytes = b"tail") -> None:
    with open(path, "wb") as handle:
        handle.truncate(apparent)
        handle.seek(apparent // 2)
        handle.write(data)


def test_the_disk_measure_counts_a_sparse_file_at_its_apparent_size(tmp_path):
    sparse(tmp_path / "hole.bin", 32 * MiB)
    assert (tmp_path / "hole.bin").stat().st_blocks * 512 < MiB   # the file system keeps it sparse
    assert workspace_bytes(str(tmp_path)) >= 32 * MiB


def test_the_snapshot_store_keeps_a_sparse_file_sparse(tmp_path):
    workspace, restored = tmp_path / "workspace", tmp_path / "restored"
    workspace.mkdir()
    sparse(workspace / "hole.bin", 32 * MiB)
    store = ObjectStore(tmp_path / "objects", durable=False)
    snapshotter = Snapshotter(workspace, store)
    delta = snapshotter.scan()
    digest = delta.changed["hole.bin"]
    stored = store.path(digest).stat()
    assert stored.st_size == 32 * MiB and stored.st_blocks * 512 < 2 * MiB
    restore_files(store, snapshotter.manifest, restored)
    copy = (restored / "hole.bin").stat()
    assert copy.st_size == 32 * MiB and copy.st_blocks * 512 < 2 * MiB
    with open(restored / "hole.bin", "rb") as handle:
        assert hashlib.sha256(handle.read()).hexdigest() == digest


def test_a_file_that_ends_in_a_hole_keeps_its_length(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with open(workspace / "tail.bin", "wb") as handle:
        handle.write(b"head")
        handle.truncate(8 * MiB)
    store = ObjectStore(tmp_path / "objects", durable=False)
    digest = Snapshotter(workspace, store).scan().changed["tail.bin"]
    assert store.get_bytes(digest) == b"head" + bytes(8 * MiB - 4)


def test_sparse_files_cannot_pass_the_workspace_disk_limit(folders, mode):
    # each file fits the room left (RLIMIT_FSIZE), together they are ten times the limit
    result = folders.run("""
        import os, time
        for n in range(10):
            with open(f"hole-{n}.bin", "wb") as handle:
                handle.truncate(18 << 20)
        print("made ten holes", flush=True)
        time.sleep(30)
    """, disk_bytes=20 * MiB, timeout_s=20)
    assert not result.timed_out and result.exit_code is None
    assert result.killed_reason.startswith("the workspace grew past its disk limit of 20 MiB")
    assert result.wall_s < 5
