"""The kill that a fork bomb cannot outrun, path by path, on stand-in cgroup folders (the files the
kernel would hold) and real child processes; the end-to-end bombs are in test_hostile_scripts.py."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from mlab.sandbox import cgroup as sandbox_cgroup


def sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def ended(process: subprocess.Popen, within_s: float = 5.0) -> bool:
    try:
        process.wait(within_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False
    return process.returncode == -9


def test_a_v2_cgroup_is_frozen_before_it_is_killed(tmp_path, monkeypatch):
    for name in ("cgroup.freeze", "cgroup.kill", "cgroup.procs"):
        (tmp_path / name).write_text("0")
    written = []
    original = Path.write_text
    monkeypatch.setattr(Path, "write_text", lambda self, text, *a, **k: (written.append((self.name, text)),
                                                                          original(self, text, *a, **k))[1])
    sandbox_cgroup.ScriptCgroup(tmp_path).kill()
    assert written == [("cgroup.freeze", "1"), ("cgroup.kill", "1")]


def test_without_cgroup_kill_the_frozen_members_are_killed_one_by_one(tmp_path):
    child = sleeper()
    (tmp_path / "cgroup.freeze").write_text("0")
    (tmp_path / "cgroup.procs").write_text(f"{child.pid}\n")
    sandbox_cgroup.ScriptCgroup(tmp_path).kill()
    assert (tmp_path / "cgroup.freeze").read_text() == "1"
    assert ended(child)


def test_a_v1_group_is_frozen_killed_and_thawed(tmp_path, monkeypatch):
    child = sleeper()
    pids, freezer = tmp_path / "pids", tmp_path / "freezer"
    for folder in (pids, freezer):
        folder.mkdir()
        (folder / "cgroup.procs").write_text(f"{child.pid}\n")
    (freezer / "freezer.state").write_text("THAWED")
    group = sandbox_cgroup.ScriptCgroupV1({"pids": pids, "freezer": freezer})
    assert group.procs_files == [str(pids / "cgroup.procs")]
    assert group.optional_procs_files == [str(freezer / "cgroup.procs")]
    states = []
    original = Path.write_text
    monkeypatch.setattr(Path, "write_text", lambda self, text, *a, **k: (states.append(text),
                                                                          original(self, text, *a, **k))[1])
    group.kill()
    assert states == ["FROZEN", "THAWED"]   # frozen for the kill, then thawed to die
    assert ended(child)


def test_a_hybrid_layouts_v2_group_kills_at_once_when_the_script_joined_it(tmp_path, monkeypatch):
    pids, unified = tmp_path / "pids", tmp_path / "unified"
    for folder in (pids, unified):
        folder.mkdir()
    (pids / "cgroup.procs").write_text("")
    (unified / "cgroup.kill").write_text("0")
    (unified / "cgroup.procs").write_text("")   # not joined: the v1 path is taken
    group = sandbox_cgroup.ScriptCgroupV1({"pids": pids, "unified": unified})
    group.kill()
    assert (unified / "cgroup.kill").read_text() == "0"
    (unified / "cgroup.procs").write_text(f"{os.getpid()}\n")   # joined (a stand-in: nothing is signalled)
    group.kill()
    assert (unified / "cgroup.kill").read_text() == "1"


def test_a_uid_kill_reaches_every_process_of_the_uid():
    from mlab.sandbox import proc

    if os.geteuid() != 0:
        import pytest

        pytest.skip("killing by uid needs a root harness")
    from mlab.sandbox.uids import UidLease

    lease = UidLease.take()   # a uid of the pool that nothing else runs as while it is held
    if not lease.pooled:
        import pytest

        pytest.skip("no uid of the pool is free")
    try:
        children = [subprocess.Popen(["/bin/sleep", "60"], user=lease.uid, group=lease.gid, extra_groups=[],
                                     cwd="/") for _ in range(3)]
        time.sleep(0.2)
        proc.kill_user(lease.uid, lease.gid)
        assert all(ended(child) for child in children)
    finally:
        lease.release()
