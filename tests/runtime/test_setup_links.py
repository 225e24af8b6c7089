"""Setting up a run: read-only data reaches the workspace as a hard link to the prepared cache
(through the run's object store), never copied nor read; writable data is copied once. Scripts run
in the real sandbox here (bubblewrap; a failure in CI, where it must be there), since it is what
keeps a script from writing through the link into the cache."""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from mlab.build import TaskBuild
from mlab.data.prepare import prepare_data
from mlab.run.checkout import checkout
from mlab.run.folder import Run
from mlab.sandbox import runner


@pytest.fixture
def sandboxed(monkeypatch):
    from mlab.actions.scripts import use_script_runner

    monkeypatch.delenv(runner.NO_SANDBOX_VARIABLE, raising=False)
    usable, reason = runner.sandbox_available()
    if not usable:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"no sandbox here: {reason}")
    previous = use_script_runner(None)
    yield
    use_script_runner(previous)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def inode(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


@pytest.fixture
def house_run(house_task, tmp_path, sandboxed):
    """A run of house-price whose train.csv is writable (test.csv and the rest stay read-only)."""
    doc = dict(house_task.document, read_only=["data_description.txt", "test.csv"])
    task = TaskBuild.of(house_task.name, doc, house_task.build)
    run = Run.create(task, task.build.agent("research"), tmp_path / "runs")
    yield run, prepare_data(task, "lite")
    run.close()


SPOIL = """
import os
for attempt in (lambda: open('test.csv', 'a').write('spoiled'), lambda: os.chmod('test.csv', 0o666),
                lambda: os.link('test.csv', 'copy.csv'), lambda: os.truncate('test.csv', 0)):
    try:
        attempt()
        print('done')
    except OSError as problem:
        print('refused', problem.errno)
"""


def test_read_only_data_is_a_link_to_the_cache_that_no_script_or_action_can_change(house_run):
    run, prepared = house_run
    data, cached = run.workspace.root / "test.csv", prepared.public / "test.csv"
    before = sha(cached)
    assert inode(data) == inode(cached) and not os.stat(cached).st_mode & 0o222   # linked, not copied
    assert inode(run.workspace.root / "train.csv") != inode(prepared.public / "train.csv")   # writable: a copy
    run.step("Write File", {"file_name": "spoil.py", "content": SPOIL})
    observation = run.step("Execute Script", {"script_name": "spoil.py"})
    assert "done" not in observation.text and observation.text.count("refused") == 4, observation.text
    refused = run.step("Write File", {"file_name": "test.csv", "content": "spoiled"})
    assert refused.status == "error" and "read-only" in refused.text
    assert sha(cached) == sha(data) == before and inode(data) == inode(cached)
    assert all("test.csv" not in r["snapshot"]["changed"] for r in run.records)
    assert all("left out of the workspace's snapshot" not in r["observation"] for r in run.records)


def test_snapshots_and_resume_stay_exact_with_linked_data(house_run, tmp_path):
    run, prepared = house_run
    expected = {rel: sha(run.workspace.root / rel) for rel in ("train.csv", "test.csv", "data_description.txt")}
    run.step("Write File", {"file_name": "notes.txt", "content": "one"})
    run.step("Write File", {"file_name": "train.csv", "content": "a,b\n1,2\n"})
    folder = run.dir
    run.close()
    for step, train in ((0, expected["train.csv"]), (2, hashlib.sha256(b"a,b\n1,2\n").hexdigest())):
        target = tmp_path / f"at-{step}"
        checkout(folder, step, target)
        assert sha(target / "test.csv") == expected["test.csv"] and sha(target / "train.csv") == train
    resumed = Run.resume(folder)
    try:
        data = resumed.workspace.root / "test.csv"
        assert inode(data) == inode(prepared.public / "test.csv")   # the link is kept, not rewritten
        observation = resumed.step("List Files", {"dir_path": "."})
        assert resumed.records[-1]["snapshot"] == {"changed": {}, "removed": []}
        assert "test.csv" in observation.text and sha(data) == expected["test.csv"]
    finally:
        resumed.close()


def test_a_run_resumed_without_the_sandbox_gets_copies_of_its_linked_data(house_run, monkeypatch):
    """Where scripts run without bubblewrap nothing binds the linked data read-only, so a run
    resumed there gives its workspace copies of its own: a script cannot write into the cache."""
    import mlab.run.folder as folder_module

    run, prepared = house_run
    folder, cached = run.dir, prepared.public / "test.csv"
    before = sha(cached)
    outside = run.dir.parent / "outside.txt"
    outside.write_text("host file\n")
    (run.workspace.root / ".unshare-test.csv").symlink_to(outside)   # a link the agent left: never written through
    run.step("List Files", {"dir_path": "."})
    run.close()
    monkeypatch.setattr(folder_module, "scripts_sandboxed", lambda: False)
    resumed = Run.resume(folder)
    try:
        data = resumed.workspace.root / "test.csv"
        assert inode(data) != inode(cached) and os.stat(data).st_nlink == 1 and sha(data) == before
        assert outside.read_text() == "host file\n"
        resumed.step("List Files", {"dir_path": "."})
        assert resumed.records[-1]["snapshot"] == {"changed": {}, "removed": []}
        os.chmod(data, 0o644)
        data.write_text("spoiled")   # what an unsandboxed script could do: the cache keeps its bytes
        assert sha(cached) == before
    finally:
        resumed.close()


def test_writable_data_changed_by_the_agent_is_restored_by_undo(house_run):
    run, prepared = house_run
    data = run.workspace.root / "train.csv"
    original = sha(data)
    run.step("Write File", {"file_name": "train.csv", "content": "changed\n"})
    assert data.read_text() == "changed\n" and sha(prepared.public / "train.csv") == original
    observation = run.step("Undo Edit Script", {"script_name": "train.csv"})
    assert observation.status == "ok", observation.text
    assert sha(data) == original == sha(prepared.public / "train.csv")
    assert run.records[-1]["snapshot"]["changed"] == {"train.csv": original}


def test_a_removed_read_only_file_is_put_back_without_touching_the_cache(house_run):
    run, prepared = house_run
    before = sha(prepared.public / "test.csv")
    run.step("Write File", {"file_name": "rm.py", "content": "import os; os.remove('test.csv')\n"})
    observation = run.step("Execute Script", {"script_name": "rm.py"})
    data = run.workspace.root / "test.csv"
    if "put back" in observation.text:   # bubblewrap binds the file: the script could not remove it
        assert stat.S_ISREG(os.lstat(data).st_mode)
    assert sha(data) == before == sha(prepared.public / "test.csv")


def test_scoring_copies_take_linked_data_and_still_leave_out_other_hard_links(house_run, tmp_path):
    from mlab.scoring.timed_sandbox import copy_files

    run, _ = house_run
    answers = next(p for p in run.private_dir.rglob("*") if p.is_file())
    os.link(answers, run.workspace.root / "answers.csv")   # what a script outside the sandbox could do
    left_out = copy_files(run.workspace.root, tmp_path / "copy")
    assert sha(tmp_path / "copy" / "test.csv") == sha(run.workspace.root / "test.csv")
    assert not (tmp_path / "copy" / "answers.csv").exists() and any("answers.csv" in why for why in left_out)


def test_a_large_source_file_is_hashed_once_until_it_changes(tmp_path, monkeypatch):
    import mlab.cache as cache

    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "SETTLED_S", -1.0)   # the file need not be two seconds old here
    path = tmp_path / "source.bin"
    path.write_bytes(os.urandom(cache.REMEMBERED_FROM))
    real = cache.file_sha256(path)
    assert real == sha(path)
    entries = list((tmp_path / "cache" / "hashes").rglob("*"))
    remembered = next(p for p in entries if p.is_file())
    remembered.write_text("f" * 64)   # the next call answers from this entry without reading the file
    assert cache.file_sha256(path) == "f" * 64
    info = os.stat(path)
    with open(path, "r+b") as handle:   # the same size and mtime, other contents: its ctime moves
        handle.write(b"changed")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert cache.file_sha256(path) == sha(path) != real


def test_the_first_step_reads_no_data_file_the_set_up_placed(house_run, monkeypatch):
    from mlab.snapshots import ObjectStore

    run, _ = house_run
    read = []
    original = ObjectStore.put_workspace_file

    def spy(store, root, rel, names=1):
        read.append(rel)
        return original(store, root, rel, names)

    monkeypatch.setattr(ObjectStore, "put_workspace_file", spy)
    observation = run.step("Write File", {"file_name": "notes.txt", "content": "hello\n"})
    assert observation.status == "ok", observation.text
    assert "notes.txt" in read and "train.csv" not in read and "test.csv" not in read, read
    assert run.records[-1]["snapshot"]["changed"].keys() == {"notes.txt"}


def test_a_source_folder_is_read_once_until_one_of_its_files_changes(tmp_path, monkeypatch):
    import mlab.cache as cache
    from mlab.data.prepare import folder_digest

    monkeypatch.setenv("MLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "SETTLED_S", -1.0)   # the files need not be two seconds old here
    folder = tmp_path / "source"
    (folder / "sub").mkdir(parents=True)
    for index in range(20):
        (folder / ("sub" if index % 2 else ".") / f"part{index}.txt").write_text(f"row {index}\n")
    first = folder_digest(folder)
    hashed = []
    monkeypatch.setattr("mlab.data.prepare.file_sha256", lambda path: hashed.append(path) or sha(path))
    assert folder_digest(folder) == first and hashed == []   # remembered: no file read
    edited = folder / "sub" / "part3.txt"
    info = os.stat(edited)
    edited.write_text("row 9\n")   # the same size and mtime, other contents: its ctime moves
    os.utime(edited, ns=(info.st_atime_ns, info.st_mtime_ns))
    changed = folder_digest(folder)
    assert changed != first and len(hashed) == 20
    (folder / "part2.txt").rename(folder / "part2b.txt")   # a renamed file: another digest
    assert folder_digest(folder) not in (first, changed)


def _move_to_fan_out(objects: Path) -> int:
    """Put every object named objects/<64 hex> into its fan-out folder, as run.json version 6 and
    earlier stored them; how many were moved."""
    moved = 0
    for entry in list(os.scandir(objects)):
        if len(entry.name) == 64 and entry.is_file(follow_symlinks=False):
            (objects / entry.name[:2]).mkdir(exist_ok=True)
            os.rename(entry.path, objects / entry.name[:2] / entry.name[2:])
            moved += 1
    return moved


def test_linked_data_takes_no_fan_out_folder_and_every_layout_reads_back_exact(house_run, tmp_path):
    """A read-only data file's object is objects/<digest> (one link, no folder made at set-up);
    resume and checkout stay exact with it, after the cache is removed, in a folder moved or
    copied elsewhere, and in a run folder of version 6 whose objects all have fan-out folders."""
    import json
    import shutil

    from mlab.run.meta import RUN_JSON

    run, prepared = house_run
    cached = prepared.public / "test.csv"
    digest, expected = sha(cached), {rel: sha(run.workspace.root / rel) for rel in ("train.csv", "test.csv")}
    objects = run.dir / "objects"
    assert inode(objects / digest) == inode(cached) == inode(run.workspace.root / "test.csv")
    assert not (objects / digest[:2] / digest[2:]).exists()
    run.step("Write File", {"file_name": "train.csv", "content": "a,b\n1,2\n"})
    changed = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    folder = run.dir
    run.close()
    shutil.rmtree(prepared.folder)   # the cache removed: the run keeps its own link to the data

    def exact(folder: Path, name: str) -> None:
        for step, train in ((0, expected["train.csv"]), (1, changed)):
            target = tmp_path / f"{name}-{step}"
            checkout(folder, step, target)
            assert sha(target / "test.csv") == expected["test.csv"] and sha(target / "train.csv") == train
        resumed = Run.resume(folder)
        try:
            resumed.step("List Files", {"dir_path": "."})
            assert resumed.records[-1]["snapshot"] == {"changed": {}, "removed": []}
            assert sha(resumed.workspace.root / "train.csv") == changed
            assert sha(resumed.workspace.root / "test.csv") == expected["test.csv"]
        finally:
            resumed.close()

    moved = tmp_path / "moved" / folder.name
    moved.parent.mkdir()
    os.rename(folder, moved)
    exact(moved, "moved")
    copied = tmp_path / "copied" / folder.name
    shutil.copytree(moved, copied, symlinks=True)   # links become files of their own
    exact(copied, "copied")
    assert _move_to_fan_out(moved / "objects") >= 1   # what version 6 made
    meta = json.loads((moved / RUN_JSON).read_text())
    (moved / RUN_JSON).write_text(json.dumps(dict(meta, schema_version=6)))
    exact(moved, "version-6")


DUPLICATE_TASK = """\
use std "agents"
task dup {
  title "Data files of the same contents"
  category canonical
  problem "Train."
  starter "env"
  read_only ["*.bin"]
  data lite { from folder "data" split none public ["a.bin", "b.bin", "c.bin", "d.bin"] }
  metric mae on "y" lower_is_better
  baseline run "train.py"
}
"""
READ_DATA = "print(*(f'{n} {len(open(n, \"rb\").read())}' for n in ('a.bin', 'b.bin', 'c.bin', 'd.bin')))\n"


@pytest.fixture
def duplicate_task(tmp_path, mlab_env):
    """A task whose read-only data files a.bin and b.bin have the same contents, whose c.bin
    replaces a starter file of that name, and whose d.bin has the contents of the starter's copy.bin."""
    from mlab.build import resolve_task

    folder = tmp_path / "dup"
    for rel, body in {"env/train.py": b"print('hello')\n", "env/c.bin": b"the starter's c\n",
                      "env/copy.bin": b"d" * 40, "data/a.bin": b"a" * 1500, "data/b.bin": b"a" * 1500,
                      "data/c.bin": b"the data's c\n", "data/d.bin": b"d" * 40}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(body)
    (folder / "dup.mlab").write_text(DUPLICATE_TASK)
    return resolve_task(str(folder / "dup.mlab"))


def test_data_sharing_contents_or_a_name_with_other_files_is_placed_once_and_readable(
        duplicate_task, tmp_path, sandboxed, monkeypatch):
    from mlab.snapshots import ObjectStore

    run = Run.create(duplicate_task, duplicate_task.build.agent("research"), tmp_path / "runs")
    try:
        root, store = run.workspace.root, run.store
        assert inode(root / "a.bin") == inode(root / "b.bin") == inode(store.path(sha(root / "a.bin")))
        assert (root / "c.bin").read_bytes() == b"the data's c\n"
        assert inode(root / "c.bin") == inode(store.path(sha(root / "c.bin")))
        # copy.bin's object was stored first and is the harness's own file (mode 600): d.bin is a copy
        assert inode(root / "d.bin") != inode(store.path(sha(root / "d.bin")))
        assert not (run.dir / "objects" / sha(root / "d.bin")).exists()   # and no second object of it
        read = []
        original = ObjectStore.put_workspace_file
        monkeypatch.setattr(ObjectStore, "put_workspace_file",
                            lambda store, root, rel, names=1: read.append(rel) or original(store, root, rel, names))
        run.step("List Files", {"dir_path": "."})
        assert run.records[-1]["snapshot"] == {"changed": {}, "removed": []}
        assert not {"a.bin", "b.bin", "c.bin", "d.bin"} & set(read), read   # the data is known: not read again
        run.step("Write File", {"file_name": "read.py", "content": READ_DATA})
        observation = run.step("Execute Script", {"script_name": "read.py"})
        assert "a.bin 1500 b.bin 1500 c.bin 13 d.bin 40" in observation.text, observation.text
        folder, expected = run.dir, {p.name: p.read_bytes() for p in root.glob("*.bin")}
    finally:
        run.close()
    checkout(folder, 0, tmp_path / "at-0")
    assert {p.name: p.read_bytes() for p in (tmp_path / "at-0").glob("*.bin")} == expected
    resumed = Run.resume(folder)
    try:
        resumed.step("List Files", {"dir_path": "."})
        assert resumed.records[-1]["snapshot"] == {"changed": {}, "removed": []}
        data = resumed.workspace.root / "b.bin"
        assert inode(data) == inode(resumed.store.path(sha(data)))   # still the object, not rewritten
    finally:
        resumed.close()


def _refuse_workspace_links(monkeypatch, problem: int) -> None:
    """os.link fails with `problem` for a name in a run's workspace (the objects are still linked)."""
    real = os.link

    def link(source, target, *args, **kwargs):
        if f"{os.sep}workspace{os.sep}" in os.fspath(target):
            raise OSError(problem, os.strerror(problem))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)


def test_read_only_data_that_cannot_be_linked_into_the_workspace_is_copied_and_read_no_more(
        house_task, tmp_path, sandboxed, monkeypatch):
    import errno

    _refuse_workspace_links(monkeypatch, errno.EMLINK)   # the cache file has as many names as it can
    run = Run.create(house_task, house_task.build.agent("research"), tmp_path / "runs")
    try:
        cached = prepare_data(house_task, "lite").public / "test.csv"
        data = run.workspace.root / "test.csv"
        assert inode(data) != inode(cached) and sha(data) == sha(cached)
        run.step("List Files", {"dir_path": "."})
        assert run.records[-1]["snapshot"] == {"changed": {}, "removed": []}
    finally:
        run.close()


def test_a_data_file_that_cannot_be_placed_fails_the_set_up_whole(house_task, tmp_path, sandboxed, monkeypatch):
    import errno
    import shutil

    _refuse_workspace_links(monkeypatch, errno.EMLINK)
    real = shutil.copyfile

    def copyfile(source, target, *args, **kwargs):   # and the copy in its place finds the disk full
        if os.fspath(target).endswith(f"{os.sep}workspace{os.sep}test.csv"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(target))
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copyfile)
    with pytest.raises(OSError) as raised:
        Run.create(house_task, house_task.build.agent("research"), tmp_path / "runs")
    assert raised.value.errno == errno.ENOSPC
    assert list((tmp_path / "runs").iterdir()) == []   # no run, and no half-made folder left
