"""Making a new run folder: a run id reserved under a hidden staging name (.<run-id>.partial), the
starter, the canary, the data and the build copy placed and the initial snapshot taken there,
run.json written, and the folder renamed into place last, so a creation killed at any point
leaves no run (a later creation removes what it left)."""
from __future__ import annotations

import os
import secrets
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from mlab import __version__
from mlab.actions.scripts import scripts_sandboxed
from mlab.actions.workspace import Workspace
from mlab.build import AgentBuild, TaskBuild, compiler_version
from mlab.data.install import install_run_data
from mlab.data.prepare import install_starter, prepare_data
from mlab.data.requirements import check_requirements
from mlab.errors import RunError, StorageError
from mlab.limits import resolve_limits
from mlab.run.agent_python import agent_python
from mlab.run.canary import write_canary
from mlab.run.hardware import measure_hardware
from mlab.run.meta import RUN_JSON, RUN_SCHEMA_ID, RUN_VERSION
from mlab.run.node import agent_node
from mlab.run.recovery import lock_run
from mlab.snapshots import ObjectStore, Snapshotter
from mlab.standard_json import write_json
from mlab.trace import TRACE, timestamp

PARTIAL_SUFFIX = ".partial"   # .<run-id>.partial: a run folder being made (hidden from every listing)
ABANDONED_AFTER_S = 60   # a .partial folder this old whose lock no process holds was left by a crash


def make_run_folder(task: TaskBuild, agent: AgentBuild, runs_dir: Path, data: str, seed: int,
                    limits: dict | None, python: str | None, device: str | None, cache_dir: Path | None,
                    extra: dict[str, dict] | None) -> tuple[Path, dict, int, Snapshotter]:
    """A new run folder under runs_dir, whole (what `Run.create` drives): its path, its run.json,
    the lock held on it and the snapshotter of its initial workspace."""
    variant = task.variant(data)
    resolved = resolve_limits(task.view.limits, variant.limits, limits)
    check_requirements(task.name, task.view.requires, python)  # before any data or script
    node = agent_node(agent)  # an agent with npm packages: the host's node, or why there is none
    interpreter = agent_python(agent)  # an agent that names its Python: the host's, or what to install
    prepared = prepare_data(task, data, cache_dir=cache_dir)
    runs_dir = Path(runs_dir).resolve()
    run_id = _reserve_run_id(runs_dir)
    staging, folder = runs_dir / f".{run_id}{PARTIAL_SUFFIX}", runs_dir / run_id
    lock = None
    try:  # a folder left half made (an error, a Ctrl-C) is no run: remove it
        lock = lock_run(staging, run_id)   # held from the start, and by the Run after the rename
        store, snapshotter = _fill_staging(staging, task, agent, prepared)
        meta = {
            "schema": RUN_SCHEMA_ID, "schema_version": RUN_VERSION, "id": run_id, "created": timestamp(),
            "mlab_version": __version__, "compiler_version": compiler_version(),
            "task": task.name, "agent": agent.name, "data": {"variant": data, "key": prepared.key},
            "seed": int(seed), "limits": resolved.to_json(),
            "python": python or sys.executable, "device": device,
            "build": {"digest": task.build.digest, "from": str(task.build.dir)},
            "read_only": list(task.view.read_only), "sandbox": _sandbox_state(),
            "initial_snapshot": store.put_json(snapshotter.manifest),
            "task_version": task.view.version,
            "hardware": measure_hardware(task.view.cpus, resolved.memory, task.view.requires, python, device),
            **({"node": node.to_json()} if node is not None else {}),
            **({"agent_python": interpreter.to_json()} if interpreter is not None else {}),
        }
        write_json(staging / RUN_JSON, meta, sync=True)   # standard JSON whatever the document holds
        for name, document in (extra or {}).items():
            write_json(staging / name, document, sync=True)
        (staging / TRACE).touch()
        (staging / "research_log.md").touch()
        _fsync_folder(staging)
        os.rename(staging, folder)   # the run exists from here on, whole
        _fsync_folder(runs_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if lock is not None:
            os.close(lock)
        raise
    return folder, meta, lock, snapshotter


def new_run_id() -> str:
    """Sortable by creation time and unique: 20261130T041500-3f9a2c."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def _reserve_run_id(runs_dir: Path) -> str:
    """A new run id whose hidden staging folder (.<run-id>.partial) this call made under runs_dir."""
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(runs_dir)
        for _ in range(20):
            run_id = new_run_id()
            if not (runs_dir / run_id).exists():
                try:
                    (runs_dir / f".{run_id}{PARTIAL_SUFFIX}").mkdir()
                    return run_id
                except FileExistsError:
                    pass
    except OSError as problem:
        raise StorageError(f"cannot create a run folder in {runs_dir}: {problem.strerror or problem}") from None
    raise RunError(f"cannot find a free run id in {runs_dir}")


def _remove_abandoned(runs_dir: Path) -> None:
    """Remove the .<id>.partial folders of creations that were killed: their lock is free (the
    kernel drops it when its process dies) and they are older than a creation's first moment."""
    from mlab.locks import RUN_LOCK, try_lock
    from mlab.tree import remove_tree

    for path in runs_dir.glob(f".*{PARTIAL_SUFFIX}"):
        try:
            fresh = time.time() - path.lstat().st_mtime < ABANDONED_AFTER_S
            fd = None if fresh or not path.is_dir() else try_lock(path / RUN_LOCK)
            if fd is not None:   # None: too young, or still being made
                try:
                    remove_tree(path)
                finally:
                    os.close(fd)
        except OSError:
            continue


def _sandbox_state() -> dict:
    """Whether scripts can run inside bubblewrap here, and why (run.json's sandbox)."""
    from mlab.sandbox.runner import sandbox_available

    usable, reason = sandbox_available()
    return {"sandboxed": bool(usable), "reason": reason}


def _fill_staging(staging: Path, task: TaskBuild, agent: AgentBuild, prepared) -> tuple[ObjectStore, Snapshotter]:
    """A new run's folders: the starter, the canary and the data placed (the answers in private/),
    the build copied, and the initial snapshot taken into a durable object store."""
    for sub in ("workspace", "private", "objects", "output"):
        (staging / sub).mkdir()
    install_starter(task, staging / "workspace")
    write_canary(staging / "workspace", task.name, task.view.version)
    store = ObjectStore(staging / "objects", durable=True)  # the initial state must survive anything
    snapshotter = Snapshotter(staging / "workspace", store)
    snapshotter.scan()   # the starter's files and the canary, before the data: a walk of a few files
    link = Workspace(staging / "workspace", task.view.read_only).is_read_only if scripts_sandboxed() else None
    placed, linked = install_run_data(prepared, staging / "workspace", staging / "private", store, link,
                                      stored=set(snapshotter.manifest.values()))
    snapshotter.adopt(placed, linked)   # the data, whose digests preparation recorded
    _copy_build(task, agent, staging / "build")
    return store, snapshotter


def _fsync_folder(path: Path) -> None:
    """Make a folder's entries (a new file, a rename into it) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_build(task: TaskBuild, agent: AgentBuild, target: Path) -> None:
    """Copy the manifest and the task's and agent's artifacts into the run folder."""
    source = task.build.dir
    for rel in ["manifest.json", *task.build.manifest["tasks"][task.name]["artifacts"],
                *agent.build.manifest["agents"][agent.name]["artifacts"]]:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target / rel)
