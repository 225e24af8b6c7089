"""Run a sweep: every run of an experiment, each exactly once, through an executor.

The sweep keeps sweep.json in step with what happens: a run that ends with result.json is done;
one whose process or worker was lost is resumed from its folder (at most MAX_INTERRUPTIONS
times in one sweep, then it counts as a failure); one that fails is set aside and started
afresh while the experiment's `retries` allow. Re-running the sweep picks up where the last one
stopped, whatever stopped it.
"""
from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections import Counter, deque
from dataclasses import dataclass

from mlab.errors import EXIT_INTERRUPTED
from mlab.sweeps.executors import Ended, Executor
from mlab.locks import run_is_busy
from mlab.sweeps.plan import RunSpec
from mlab.sweeps.progress import Progress
from mlab.sweeps.state import DONE, FAILED, INTERRUPTED, PENDING, RUNNING, SweepFolder, Work, new_entry, reconcile

MAX_INTERRUPTIONS = 3
POLL_S = 0.25


class StopRequest:
    """Set from signal handlers: stop starting runs (first Ctrl-C), stop runs at once (second)."""

    def __init__(self):
        self.asked = 0

    def ask(self) -> int:
        self.asked += 1
        return self.asked


@contextlib.contextmanager
def stop_on_signals(stop: StopRequest):
    """Ctrl-C: stop after the runs' current steps, again: stop them at once; SIGTERM: at once."""
    def on_interrupt(signum, frame):
        if stop.ask() == 1:
            print("\nstopping: runs end after their current step (Ctrl-C again to stop them at once; "
                  "either way they stay resumable)", file=sys.stderr, flush=True)

    def on_terminate(signum, frame):
        stop.asked = max(stop.asked, 1) + 1

    previous = {signal.SIGINT: signal.signal(signal.SIGINT, on_interrupt),
                signal.SIGTERM: signal.signal(signal.SIGTERM, on_terminate)}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@dataclass
class SweepOutcome:
    done: int
    failed: int
    unfinished: int
    stopped: bool
    stopped_for_cost: bool = False  # the sweep's cost limit held the unfinished runs back

    @property
    def exit_code(self) -> int:
        if self.stopped:
            return EXIT_INTERRUPTED
        return 0 if self.failed == 0 and self.unfinished == 0 else 1


class Sweep:
    """One pass over an experiment's runs in a sweep folder."""

    def __init__(self, name: str, specs: list[RunSpec], folder: SweepFolder, executor: Executor,
                 retries: int, progress: Progress, stop: StopRequest | None = None, budget=None):
        self.name = name
        self.specs = specs
        self.by_key = {spec.key: spec for spec in specs}
        self.folder = folder
        self.executor = executor
        self.retries = retries
        self.progress = progress
        self.stop = stop or StopRequest()
        self.budget = budget  # a SweepBudget (mlab sweep --cost), or None
        if budget is not None:
            progress.cost_limit = budget.limit
        self.state: dict = {}
        self.interruptions: Counter = Counter()
        self._stop_sent = 0
        self._waiting_on_lock: set[str] = set()

    # -- the loop ------------------------------------------------------------------------
    def run(self, retry_failed: bool = False) -> SweepOutcome:
        self.state = self.folder.load(self.name)
        queue = deque(reconcile(self.folder, self.state, self.specs, self.retries, retry_failed))
        self.folder.save(self.state)
        kinds = Counter(work.kind for work in queue)
        self._event(f"to run: {len(queue)} (new {kinds['new']}, resume {kinds['resume']}, retry {kinds['retry']}); "
                    f"done before: {self.counts()['done']}")
        self._refresh(force=True)
        while queue or self.executor.running():
            if self.stop.asked:
                self._pass_stop_on()
            else:
                self._start_what_fits(queue)
            for ended in self.executor.poll(POLL_S):
                self._handle(ended, queue)
            self._note_run_names()
            self._refresh()
            if (self.stop.asked or self._held_for_cost()) and not self.executor.running():
                break
        self.folder.save(self.state)
        self._refresh(force=True)
        return self._outcome()

    def _start_what_fits(self, queue: deque) -> None:
        for work in list(queue):
            if not self.executor.has_room():
                return
            if work.resume and run_is_busy(self.folder.run_dir(work.resume)):
                if work.spec.key not in self._waiting_on_lock:
                    self._waiting_on_lock.add(work.spec.key)
                    self._event(f"waiting: {work.spec.key} is still driven by an earlier process")
                continue
            started = self._within_budget(work)
            if started is None:
                return
            attempt = self.executor.try_start(started)
            if attempt is None:
                continue
            queue.remove(work)
            entry = self._entry(work.spec)
            entry["status"] = RUNNING
            entry["attempts"] += 1
            self.folder.save(self.state)
            devices = f" on device {','.join(attempt.devices)}" if attempt.devices else ""
            self._event(f"start  {work.spec.key} ({work.kind}{devices})")

    def _held_for_cost(self) -> bool:
        return self.budget is not None and self.budget.stopped

    def _within_budget(self, work: Work) -> Work | None:
        """The work with the sweep's budget left as its cost limit; None once the budget is spent."""
        if self.budget is None:
            return work
        remaining = self.budget.remaining(self.state)
        if remaining > 0:
            return self.budget.limited(work, remaining)
        if not self.budget.stopped:
            self.budget.stopped = True
            self._event(f"cost limit ${self.budget.limit:g} reached (${self.budget.limit - remaining:.4f} spent): "
                        "no more runs are started")
        return None

    def _pass_stop_on(self) -> None:
        if self.stop.asked > self._stop_sent:
            self.executor.stop(hard=self.stop.asked > 1)
            self._stop_sent = self.stop.asked

    # -- endings -------------------------------------------------------------------------
    def _handle(self, ended: Ended, queue: deque) -> None:
        spec = ended.attempt.work.spec
        entry = self._entry(spec)
        if ended.attempt.run_name:
            entry["run"] = ended.attempt.run_name
        entry["exit_code"] = ended.exit_code
        name = entry.get("run")
        if self.folder.finished(name):
            entry["status"], entry["error"] = DONE, None
            self._event(f"done   {spec.key}: {self._verdict(name)}")
        elif ended.lost or ended.exit_code == EXIT_INTERRUPTED or (ended.exit_code or 0) < 0 or self.stop.asked:
            self._interrupted(spec, entry, ended, queue)
        else:
            self._failed(spec, entry, ended.message or f"`mlab run` exited with {ended.exit_code}", queue)
        self.folder.save(self.state)

    def _interrupted(self, spec: RunSpec, entry: dict, ended: Ended, queue: deque) -> None:
        why = "its worker was lost" if ended.lost else f"it was stopped (exit {ended.exit_code})"
        if self.stop.asked:
            entry["status"] = INTERRUPTED if entry.get("run") else PENDING
            self._event(f"paused {spec.key}: resumable by running the sweep again")
            return
        self.interruptions[spec.key] += 1
        if self.interruptions[spec.key] > MAX_INTERRUPTIONS:
            self._failed(spec, entry, f"interrupted {MAX_INTERRUPTIONS + 1} times in one sweep ({why})", queue)
            return
        if entry.get("run"):
            entry["status"] = INTERRUPTED
            queue.appendleft(Work(spec, resume=entry["run"]))
            self._event(f"resume {spec.key}: {why}; continuing from its last step")
        else:
            entry["status"] = PENDING
            queue.appendleft(Work(spec))
            self._event(f"again  {spec.key}: {why} before its run folder was made")

    def _failed(self, spec: RunSpec, entry: dict, message: str, queue: deque) -> None:
        entry["failures"] += 1
        entry["error"] = message
        if entry.get("run"):
            self.folder.retire(entry["run"])
            entry["retired"].append(entry["run"])
            entry["run"] = None
        log = self.folder.log_path(spec).relative_to(self.folder.root)
        if entry["failures"] > self.retries:
            entry["status"] = FAILED
            self._event(f"FAILED {spec.key}: {message} (attempt {entry['failures']} of "
                                f"{self.retries + 1}; see {log})")
        else:
            entry["status"] = PENDING
            queue.append(Work(spec, retry=True))
            self._event(f"retry  {spec.key}: {message} (failure {entry['failures']}, "
                                f"{self.retries + 1 - entry['failures']} attempt(s) left; see {log})")

    def _verdict(self, name: str) -> str:
        try:
            result = json.loads((self.folder.run_dir(name) / "result.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "finished"
        score = "no score" if result.get("score") is None else f"{result['metric']} {result['score']:.6g}"
        verdict = "success" if result.get("success") else (result.get("failure_mode") or "below threshold")
        return f"{score}, {verdict}, {result.get('steps')} steps, {result.get('wall_time_s', 0):.1f}s"

    # -- bookkeeping ---------------------------------------------------------------------
    def _event(self, text: str) -> None:
        self.progress.counts = self.counts()
        self.progress.event(text)

    def _entry(self, spec: RunSpec) -> dict:
        return self.state["runs"].setdefault(spec.key, new_entry(spec))

    def _note_run_names(self) -> None:
        changed = False
        for attempt in self.executor.running():
            entry = self._entry(attempt.work.spec)
            if attempt.run_name and entry.get("run") != attempt.run_name:
                entry["run"] = attempt.run_name
                changed = True
        if changed:
            self.folder.save(self.state)

    def counts(self) -> dict[str, int]:
        statuses = Counter(self.state["runs"][spec.key]["status"] for spec in self.specs)
        return {"total": len(self.specs), "done": statuses[DONE], "running": statuses[RUNNING],
                "failed": statuses[FAILED], "waiting": statuses[PENDING] + statuses[INTERRUPTED]}

    def _refresh(self, force: bool = False) -> None:
        folders = [self.folder.run_dir(e["run"]) for key, e in self.state["runs"].items()
                   if key in self.by_key and e.get("run")]
        self.progress.measure(folders)
        self.progress.update(self.counts(), force=force)

    def _outcome(self) -> SweepOutcome:
        c = self.counts()
        return SweepOutcome(done=c["done"], failed=c["failed"], unfinished=c["waiting"] + c["running"],
                            stopped=bool(self.stop.asked), stopped_for_cost=self._held_for_cost())
