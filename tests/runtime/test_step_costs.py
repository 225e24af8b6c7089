"""What a step and a resume cost the harness: fsyncs batched (a kill -9 still loses no written
record), rewrites that never truncate first, and a resume that reads each workspace file once."""
from __future__ import annotations

import hashlib
import os

import mlab.snapshots as snapshots
import mlab.trace as trace
from mlab.run.folder import Run
from mlab.trace import TraceWriter, read_trace
from trace_records import record


def test_records_are_written_at_once_and_fsynced_at_most_once_per_interval(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(trace.os, "fsync", lambda fd: synced.append(fd))
    writer = TraceWriter(tmp_path / "trace.jsonl", sync_interval=3600)
    for step in range(1, 6):
        writer.append(record(step))
        # every record is in the file (the kernel's) as soon as append returns: a kill -9 keeps it
        assert len(read_trace(tmp_path / "trace.jsonl").records) == step
    assert len(synced) == 1  # the first record; the rest wait for the interval or the close
    writer.close()
    assert len(synced) == 2
    eager = TraceWriter(tmp_path / "eager.jsonl", sync_interval=0)
    eager.append(record(1))
    eager.append(record(2))
    eager.close()  # nothing appended since the last fsync: close adds none
    assert len(synced) == 4


def test_a_rewrite_with_shorter_content_leaves_no_tail_and_keeps_undo(new_run):
    run = new_run()
    run.step("Write File", {"file_name": "notes.txt", "content": "a long first version\n" * 50})
    run.step("Write File", {"file_name": "notes.txt", "content": "short\n"})
    assert (run.workspace.root / "notes.txt").read_text() == "short\n"
    observation = run.step("Undo Edit Script", {"script_name": "notes.txt"})
    assert observation.status == "ok", observation.text
    assert (run.workspace.root / "notes.txt").read_text() == "a long first version\n" * 50
    run.close()


def test_resume_hashes_each_workspace_file_at_most_once(new_run, monkeypatch):
    run = new_run()
    for version in range(5):
        run.step("Write File", {"file_name": "script.py", "content": f"print({version})\n" * 100})
    workspace = sum(p.stat().st_size for p in run.workspace.root.rglob("*") if p.is_file())
    objects = sum(len(f"print({version})\n" * 100) for version in range(5)) * 2  # snapshots and undo copies
    run.close()
    for path in run.workspace.root.rglob("*"):  # older than the racy window (a file written in the
        os.utime(path, (path.stat().st_atime - 10, path.stat().st_mtime - 10), follow_symlinks=False)
    hashed = [0]                                  # last moments is read again at the next scan)

    class Counting:
        def __init__(self, data=b""):
            self._hash = hashlib.sha256()
            self.update(data)

        def update(self, data):
            hashed[0] += len(data)
            self._hash.update(data)

        def hexdigest(self):
            return self._hash.hexdigest()

    monkeypatch.setattr(snapshots, "hashlib", type("counting", (), {"sha256": Counting}))
    resumed = Run.resume(run.dir)
    assert (resumed.workspace.root / "script.py").read_text() == "print(4)\n" * 100
    assert hashed[0] <= workspace + objects  # before: the workspace twice more (objects, rescan)
    before = hashed[0]
    resumed.step("List Files", {"dir_path": "."})
    assert hashed[0] == before  # the restored files are not read again by the next step's scan
    resumed.close()


def test_objects_are_hashed_on_resume_only_after_a_reboot(new_run, monkeypatch):
    import mlab.run.recovery as recovery  # where resuming checks the objects

    run = new_run()
    run.step("Write File", {"file_name": "a.txt", "content": "first\n"})
    run.step("Write File", {"file_name": "a.txt", "content": "second\n"})
    run.close()
    torn = run.records[-1]["snapshot"]["changed"]["a.txt"]
    run.store.path(torn).write_bytes(b"garbage of the same length")
    hashed = []
    real = recovery.hash_file
    monkeypatch.setattr(recovery, "hash_file", lambda path: hashed.append(path) or real(path))
    same = Run.resume(run.dir)  # the boot that wrote the objects: they are whole, none is read
    assert same.steps_taken == 2 and hashed == []
    same.close()
    (run.dir / ".lock").write_text("another-boot\n")  # the lock file notes the boot: as after a crash
    rebooted = Run.resume(run.dir)
    assert rebooted.steps_taken == 1 and hashed  # every object read: the torn one sets its step aside
    assert (rebooted.workspace.root / "a.txt").read_text() == "first\n"
    rebooted.close()
