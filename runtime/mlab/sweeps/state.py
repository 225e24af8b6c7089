"""The sweep folder and its state file: which run folder holds each run, and how it went.

DIR/<experiment>/ holds sweep.json (the state, written atomically), runs/ (one folder per run,
as `mlab run` makes them; failed attempts set aside in runs/.retired/), logs/ (what each run
printed) and the report. The run folders are the truth: a run with result.json is finished,
one without is resumable; sweep.json says which folder belongs to which run of the experiment
and counts failed attempts against the experiment's `retries`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from mlab.errors import MlabError, StorageError
from mlab.standard_json import write_json
from mlab.locks import run_is_busy, try_lock
from mlab.sweeps.plan import RunSpec

STATE = "sweep.json"
STATE_SCHEMA = "mlab-sweep-state"
STATE_VERSION = 1
RUNS, RETIRED, LOGS, REPORT = "runs", ".retired", "logs", "report"

# Statuses of a run in the state file.
PENDING, RUNNING, DONE, INTERRUPTED, FAILED = "pending", "running", "done", "interrupted", "failed"


@dataclass
class Work:
    """A run to execute now: started afresh, or resumed from its folder."""

    spec: RunSpec
    resume: str | None = None  # the run folder's name under runs/, when resuming
    retry: bool = False

    @property
    def kind(self) -> str:
        return "resume" if self.resume else "retry" if self.retry else "new"


class SweepFolder:
    """DIR/<experiment>/: paths, the lock, the state file."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.runs = self.root / RUNS
        self.logs = self.root / LOGS
        self.report = self.root / REPORT
        self.state_path = self.root / STATE
        self._lock: int | None = None

    def create(self) -> None:
        try:
            for folder in (self.runs, self.logs):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as problem:
            raise StorageError(f"cannot create the sweep folder {self.root}: {problem.strerror or problem}") from None

    def lock(self) -> None:
        """Hold the folder for this process; a second sweep of the same folder is refused."""
        fd = try_lock(self.root / ".sweep.lock")
        if fd is None:
            raise MlabError(f"another `mlab sweep` is working in {self.root}; wait for it to end "
                            "(or stop it) first")
        self._lock = fd

    def unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def load(self, experiment: str) -> dict:
        if not self.state_path.is_file():
            return {"schema": STATE_SCHEMA, "version": STATE_VERSION, "experiment": experiment, "runs": {}}
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as problem:
            raise StorageError(f"cannot read the sweep state {self.state_path}: {problem}") from None
        if not isinstance(state, dict) or state.get("schema") != STATE_SCHEMA:
            raise MlabError(f"{self.state_path} is not an mlab sweep state file")
        if state.get("version") != STATE_VERSION:
            raise MlabError(f"{self.state_path} was written by another mlab (state version "
                            f"{state.get('version')}, this one reads {STATE_VERSION})")
        if state.get("experiment") != experiment:
            raise MlabError(f"{self.root} holds a sweep of experiment {state.get('experiment')!r}, "
                            f"not {experiment!r}; give another --runs-dir")
        return state

    def save(self, state: dict) -> None:
        """Write the state atomically: a reader sees the old file or the new one, never a mix."""
        try:
            write_json(self.state_path, state, indent=1, sort_keys=True, sync=True)
        except OSError as problem:
            raise StorageError(f"cannot write the sweep state {self.state_path}: {problem.strerror or problem}") from None

    def run_dir(self, name: str) -> Path:
        return self.runs / name

    def finished(self, name: str | None) -> bool:
        return bool(name) and (self.runs / name / "result.json").is_file()

    def retire(self, name: str) -> None:
        """Set a failed attempt's folder aside, out of the report's way (still hidden from scripts)."""
        source = self.runs / name
        if source.is_dir():
            (self.runs / RETIRED).mkdir(exist_ok=True)
            target = self.runs / RETIRED / name
            while target.exists():
                target = target.with_name(target.name + "+")
            shutil.move(str(source), str(target))

    def log_path(self, spec: RunSpec) -> Path:
        return self.logs / (re.sub(r"[^A-Za-z0-9._=-]+", "_", spec.key) + ".log")

    def run_folders(self) -> list[str]:
        if not self.runs.is_dir():
            return []
        return sorted(p.name for p in self.runs.iterdir() if p.is_dir() and not p.name.startswith("."))


# -- which run a folder holds -------------------------------------------------------------

def read_identity(folder: Path) -> dict | None:
    """task, agent, data, seed and models of a run folder; None until `mlab run` has written them."""
    try:
        meta = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        config = json.loads((folder / "models.json").read_text(encoding="utf-8"))
        return {"task": meta["task"], "agent": meta["agent"], "data": meta["data"]["variant"],
                "seed": meta["seed"], "models": {t: c["model"] for t, c in config["tiers"].items()}}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def matching_spec(identity: dict, specs: list[RunSpec]) -> RunSpec | None:
    """The spec a run folder was started for: same task, agent, data, seed and given models."""
    best, best_tiers = None, -1
    for spec in specs:
        if (spec.task, spec.agent, spec.data, spec.seed) != (identity["task"], identity["agent"],
                                                              identity["data"], identity["seed"]):
            continue
        if all(identity["models"].get(tier) == model for tier, model in spec.models) and len(spec.models) > best_tiers:
            best, best_tiers = spec, len(spec.models)
    return best


def steps_taken(folder: Path) -> int:
    """Complete trace records of a run folder."""
    try:
        with open(folder / "trace.jsonl", "rb") as handle:
            return handle.read().count(b"\n")
    except OSError:
        return 0


# -- reconciling the state with the experiment and the disk --------------------------------

def new_entry(spec: RunSpec) -> dict:
    return {"task": spec.task, "agent": spec.agent, "data": spec.data, "seed": spec.seed,
            "models": dict(spec.models), "status": PENDING, "run": None, "attempts": 0, "failures": 0,
            "retired": [], "error": None}


def adopt_unknown_folders(folder: SweepFolder, state: dict, specs: list[RunSpec], dry: bool = False) -> None:
    """Give run folders the state does not know (a sweep killed before it noted them) to their run.

    Of two folders for one run, the finished one (else the further one) is kept and the other
    retired, so that each run ends up with exactly one folder; a folder whose run was never set
    up (no run.json or models.json) is retired too. With dry, nothing is moved.
    """
    entries = state["runs"]
    known = {e["run"] for e in entries.values() if e.get("run")}
    for name in folder.run_folders():
        if name in known:
            continue
        identity = read_identity(folder.run_dir(name))
        if identity is None and not dry and not run_is_busy(folder.run_dir(name)):
            folder.retire(name)  # its process died before `mlab run` set it up: nothing to resume
            continue
        spec = matching_spec(identity, specs) if identity else None
        if spec is None:
            continue
        entry = entries.setdefault(spec.key, new_entry(spec))
        current = entry.get("run")
        if current and (folder.run_dir(current)).is_dir():
            keep_new = _progress(folder, name) > _progress(folder, current)
            loser = current if keep_new else name
            if keep_new:
                entry["run"] = name
            if not dry:
                folder.retire(loser)
                entry["retired"].append(loser)
        else:
            entry["run"] = name
        known.add(entry["run"])


def _progress(folder: SweepFolder, name: str) -> tuple[bool, int]:
    return folder.finished(name), steps_taken(folder.run_dir(name))


def reconcile(folder: SweepFolder, state: dict, specs: list[RunSpec], retries: int,
              retry_failed: bool = False, dry: bool = False) -> list[Work]:
    """Set each run's status from its folder; return the work left, in the experiment's order."""
    adopt_unknown_folders(folder, state, specs, dry)
    entries = state["runs"]
    work = []
    for spec in specs:
        entry = entries.setdefault(spec.key, new_entry(spec))
        name = entry.get("run")
        if name and not folder.run_dir(name).is_dir():
            entry["run"] = name = None
        again = retry_failed and entry["status"] == FAILED
        if again:
            entry["failures"] = 0
        if folder.finished(name):
            entry["status"] = DONE
        elif name:
            entry["status"] = INTERRUPTED
            work.append(Work(spec, resume=name))
        elif entry["failures"] > retries:
            entry["status"] = FAILED
        else:
            entry["status"] = PENDING
            work.append(Work(spec, retry=again or entry["failures"] > 0))
    return work
