"""A run: a prepared run folder that any sequence of actions drives step by step.

runs/<run-id>/ holds run.json (what was run, validated by spec/run.schema.json: mlab.run.meta),
build/ (a copy of the task and agent artifacts, so a resumed run uses exactly what it started
with), workspace/ (what the agent sees), private/ (answers; never in the workspace), trace.jsonl
(one record per step, spec/trace.schema.json), objects/ (content-addressed snapshots and
earlier versions of edited files), output/ (live script output) and research_log.md.

`Run.create` makes the folder (mlab.run.create), `Run.resume` takes one up again from its last
complete step. Each `step` dispatches one action, snapshots what changed, and appends one trace
record (one write, fsynced at most once a second: mlab.trace); a run killed at any moment
resumes from its last complete record.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from mlab.actions.history import EditHistory, ResearchLog
from mlab.actions.primitives import PrimitiveContext, RunServices
from mlab.actions.scripts import ScriptSettings, scripts_sandboxed
from mlab.actions.table import ActionRejected, ActionTable
from mlab.actions.workspace import Workspace
from mlab.build import AgentBuild, TaskBuild, load_build
from mlab.data.install import unshare_files
from mlab.errors import MlabError, RunError
from mlab.limits import GRACE_STEPS, Limits, shutdown_text
from mlab.observation import Observation, error
from mlab.run.create import make_run_folder
from mlab.run.hardware import sampled_devices
from mlab.run.meta import RUN_JSON, read_run_meta
from mlab.run.recovery import check_run_folders, lock_run, manifest_at, records_with_intact_objects, write_boot
from mlab.run.script_env import hidden_paths, thread_env
from mlab.snapshots import ObjectStore, Snapshotter
from mlab.standard_json import write_json
from mlab.text import utf8_safe
from mlab.trace import TRACE, TRACE_VERSION, TraceWriter, full_text, repair_trace, store_long_texts, timestamp


class RunEnded(MlabError):
    """step() was called on a run that has ended."""


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

        It is made whole under a hidden name and renamed into place last (mlab.run.create), so a
        creation killed at any point leaves no run. `extra`: JSON documents (name → document) of
        the run from its start, such as `mlab run`'s models.json."""
        folder, meta, lock, snapshotter = make_run_folder(task, agent, runs_dir, data, seed, limits, python,
                                                          device, cache_dir, extra)
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
                write_json(folder / RUN_JSON, meta, sync=True)
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
