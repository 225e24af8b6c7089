"""Read finished (and unfinished) run folders for evaluation, reports and the viewer.

Everything here only reads: run.json, result.json, models.json, trace.jsonl, scores.jsonl
and the agent declaration copied into the run's build/ folder. No lock is taken and the
trace is not repaired, so a run that another process is driving can be looked at safely
(an incomplete last line is simply not shown).
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from mlab.bounded_json import TooDeep, TooLarge
from mlab.errors import MlabError, RunError, UsageError
from mlab.reports.summary import FACTS_VERSION, NODE_FIELDS, read_summary
from mlab.text import note_once
from mlab.run.meta import RUN_JSON, read_run_meta
from mlab.trace import TRACE, read_trace

if TYPE_CHECKING:
    from mlab.documents.agent import Actions, Agent
    from mlab.documents.task import Task

RESULT = "result.json"
MODELS = "models.json"
SCORES = "scores.jsonl"
DEMO_MODEL = "mlab/demo"
DEMO_SUFFIX = " (demonstration)"
# Offline models whose name carries a file or folder: the argument differs per run, so the
# model is named by its kind alone in groups (every scripted run is "mlab/scripted").
_MODELS_WITH_ARGUMENT = ("mlab/scripted:", "mlab/replay:")


def model_label(model: str | None, demo: bool = False) -> str:
    """The name a model is grouped and shown by; demonstrations say so in the name itself."""
    if not model:
        return "(unknown)"
    for prefix in _MODELS_WITH_ARGUMENT:
        if model.startswith(prefix):
            model = prefix[:-1]
    return model + DEMO_SUFFIX if demo or model == DEMO_MODEL else model


@dataclass(frozen=True)
class Section:
    """One declared reply section (or JSON field) of the run's agent."""

    name: str
    kind: str           # text, action or json
    role: str | None    # reflection, plan, fact-check, thought, ... (None for action and input)


@dataclass
class LoadedRun:
    """One run folder, read."""

    dir: Path
    meta: dict
    result: dict | None
    config: dict | None
    _records: list[dict] | None = field(default=None, repr=False)
    _findings: tuple | None = field(default=None, repr=False)  # (claims, labels), see taxonomy.findings
    _trace_note: str | None = field(default=None, repr=False)  # what read_trace said of a line it refused

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def task(self) -> str:
        return self.meta["task"]

    @property
    def agent(self) -> str:
        return self.meta["agent"]

    @property
    def variant(self) -> str:
        return self.meta["data"]["variant"]

    @property
    def seed(self) -> int:
        return int(self.meta["seed"])

    @property
    def finished(self) -> bool:
        return self.result is not None

    @property
    def tiers(self) -> dict:
        """Per tier: {"model", "params"}, from result.json or models.json (empty for scripted drives)."""
        if self.result is not None:
            return self.result.get("models") or {}
        return (self.config or {}).get("tiers") or {}

    @property
    def main_model(self) -> str | None:
        return (self.tiers.get("main") or {}).get("model")

    @property
    def demo(self) -> bool:
        if self.result is not None:
            return bool(self.result.get("demo"))
        return self.main_model == DEMO_MODEL

    @property
    def model(self) -> str:
        """The main model as grouped in reports (see model_label)."""
        return model_label(self.main_model, self.demo)

    @property
    def records(self) -> list[dict]:
        if self._records is None:
            contents = read_trace(self.dir / TRACE)
            self._records, self._trace_note = contents.records, contents.note
        return self._records

    # -- what reports take from the trace, remembered --------------------------------------
    # A 50-step research run's trace is about a megabyte (prompts, training logs); reading and
    # checking it is most of what a report or an eval of the run costs. What they take from it
    # (the number of records, a search's nodes, the findings of mlab.reports.taxonomy) is kept in
    # the user cache under the identity of the trace and result.json (device, inode, size, mtime and
    # ctime: any write moves it, and no process can set a ctime back), the run's folder and build,
    # and the reading code's own bytes: the next report reads the run's small files only.

    @cached_property
    def _facts_entry(self) -> Path | None:
        from mlab.cache import cache_root, remembered_entry, settled, stat_key

        try:
            trace = os.stat(self.dir / TRACE)
            result = os.stat(self.dir / RESULT) if self.result is not None else None
        except OSError:
            return None
        if not settled(trace) or (result is not None and not settled(result)):
            return None   # a run under way: its trace is read
        key = "\0".join(["report-facts", _facts_code_digest(), str(self.dir), self.build_key, self.agent,
                          stat_key(trace), stat_key(result) if result is not None else "-"])
        entry = remembered_entry(key)
        return cache_root() / "report-facts" / entry.parent.name / entry.name

    @cached_property
    def facts(self) -> dict | None:
        """What the harness recorded of this run's trace at its end (summary.json), or what an
        earlier report took from the unchanged trace (see above); None when neither holds."""
        summary = self.summary
        if summary is not None:
            return summary
        entry = self._facts_entry
        if entry is None:
            return None
        try:
            document = json.loads(entry.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(document, dict) or document.get("version") != FACTS_VERSION:
            return None
        if isinstance(document.get("trace_note"), str):
            note_once(document["trace_note"])   # said by every command that uses the facts, as by one reading the trace
        return document

    @cached_property
    def summary(self) -> dict | None:
        """The run's summary.json where it still describes the run (mlab.reports.summary), or None."""
        return read_summary(self)

    def remember_facts(self, facts: dict) -> None:
        entry = self._facts_entry
        if entry is None:
            return
        document = {"version": FACTS_VERSION, "trace_note": self._trace_note, **facts}
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            temp = entry.with_name(f".in-{os.getpid()}-{entry.name}")
            temp.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
            os.replace(temp, entry)
        except OSError:
            return   # a cache that cannot be written: the trace is read again next time
        self.__dict__["facts"] = document

    @property
    def record_count(self) -> int:
        """How many complete records the trace holds."""
        facts = self.facts
        if facts is not None and isinstance(facts.get("records"), int):
            return facts["records"]
        return len(self.records)

    @property
    def build_key(self) -> str:
        """What identifies the run's build copy: its digest in run.json (the folder when absent)."""
        return (self.meta.get("build") or {}).get("digest") or str(self.dir / "build")

    @cached_property
    def agent_doc(self) -> Agent | None:
        """The view of the agent as compiled (build/agents/<agent>/agent.json), or None when the
        copy is missing or does not match spec/agent.schema.json (a damaged or forged copy)."""
        return _build_view(self.build_key, self.dir, f"agents/{self.agent}/agent.json", "agent")

    @cached_property
    def actions_doc(self) -> Actions | None:
        """The view of the agent's action table as compiled (build/agents/<agent>/actions.json), or
        None when the copy is missing or does not match spec/actions.schema.json."""
        return _build_view(self.build_key, self.dir, f"agents/{self.agent}/actions.json", "actions")

    @cached_property
    def sections(self) -> list[Section]:
        """The agent's reply sections in declared order, with their roles."""
        reply = self.agent_doc.reply if self.agent_doc is not None else None
        return [Section(s.name, s.kind, s.role) for s in (reply.sections if reply is not None else ())]

    @property
    def declared_format(self) -> str | None:
        """The agent's declared reply format (sections, json, tools), None when the build is missing."""
        reply = self.agent_doc.reply if self.agent_doc is not None else None
        return reply.format if reply is not None else None

    def sections_for(self, ran: str | None) -> list[Section]:
        """The sections of the reply format a step ran: a tool agent's fallback has its own."""
        reply = self.agent_doc.reply if self.agent_doc is not None else None
        fallback = reply.fallback if reply is not None else None
        if ran and fallback is not None and ran != reply.format and fallback.sections:
            return [Section(s.name, s.kind, s.role) for s in fallback.sections]
        return self.sections

    @cached_property
    def problem(self) -> str:
        """The task's problem text, as the agent was shown it ('' when the build is missing)."""
        task = task_document(self)
        return task.problem if task is not None else ""

    @property
    def task_version(self) -> int:
        """The task version the run was made on (1 for runs recorded before versions)."""
        return int(self.meta.get("task_version") or (self.result or {}).get("task_version") or 1)

    @cached_property
    def scores(self) -> list[dict] | None:
        """Per-step scores written by `mlab eval --intermediate`, or None when there are none."""
        return read_scores(self.dir)

    @cached_property
    def nodes(self) -> list[dict]:
        """A tree search's node records in trace order (empty for a linear run), with the fields
        reports read of them."""
        facts = self.facts
        if facts is not None and isinstance(facts.get("nodes"), list):
            return facts["nodes"]
        return [{name: record[name] for name in NODE_FIELDS if name in record} for record in self.records
                if isinstance(record.get("node"), int) and not isinstance(record.get("node"), bool)]

    def release(self) -> None:
        """Keep of the trace and the scores only what a report reads once a run's row is made (the
        node records, the scores' numbers), so that a report over thousands of runs does not
        hold all their traces; the trace is read again if it is asked for."""
        self.nodes
        if self.scores is not None:
            from mlab.reports.score_rows import ScoreTable

            self.__dict__["scores"] = ScoreTable(self.scores)
        self._records = None


@functools.lru_cache(maxsize=1)
def _facts_code_digest() -> str:
    """The bytes of the code that makes a run's remembered facts: a change to it forgets them."""
    import hashlib

    from mlab.reports import taxonomy

    digest = hashlib.sha256()
    for module in (taxonomy.__file__, __file__):
        with open(module, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


# Views of run builds' documents, by (build digest, path inside the build): runs made from one
# build share it, so a report over 1,000 such runs parses and checks its task.yaml once, not 1,000
# times.
BUILD_DOCUMENTS: dict[tuple[str, str], object] = {}


def _build_view(build_key: str, run_dir: Path, rel: str, schema: str):
    """The typed view (mlab.documents) of the document `rel` (a JSON or YAML file) of the run's
    build copy (RUN_DIR/build/REL), made once per build; None when the copy is missing, unreadable or does not match
    the rules of the version it records (mlab.documents.versions). A run folder may come from an
    older mlab or from elsewhere: its copy is checked here as a loaded build is, so that an older
    copy is read in today's form and a forged one reads as a missing one."""
    key = (build_key, rel)
    if key not in BUILD_DOCUMENTS:
        path = run_dir / "build" / rel
        from ruamel.yaml.error import YAMLError

        from mlab.bounded_json import read_bytes
        from mlab.bounded_json import loads as bounded_loads

        try:
            text = read_bytes(path).decode("utf-8")   # never a link or a pipe: a run folder may come from elsewhere
            if path.suffix == ".json":
                doc = bounded_loads(text, what=str(path))
            else:
                from ruamel.yaml import YAML

                doc = YAML(typ="safe").load(text)
        except (OSError, ValueError, YAMLError, MlabError, RecursionError):  # a damaged copy: optional here
            return None
        if not isinstance(doc, dict):
            return None
        from mlab.documents.agent import Actions, Agent
        from mlab.documents.task import Task
        from mlab.documents.versions import current_form

        try:
            doc, found = current_form(schema, doc)   # by the rules of the version the copy records
            if found:
                return None
            view = {"task": Task, "agent": Agent, "actions": Actions}[schema].of(doc)
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
            return None
        BUILD_DOCUMENTS[key] = view  # only a good copy: another run of the build may hold its own
    return BUILD_DOCUMENTS[key]


def task_document(run: LoadedRun) -> Task | None:
    """The view of the task as compiled into the run's build copy (task.yaml), or None when the
    copy is missing or does not match spec/task.schema.json."""
    return _build_view(run.build_key, run.dir, f"tasks/{run.task}/task.yaml", "task")


def direction_mismatch(run: LoadedRun) -> str | None:
    """Why a finished run's result.json cannot be compared with others of its task: its metric
    direction is not the one its build copy declares (a forged or damaged result); else None."""
    task = task_document(run)
    declared = task.metric.direction if task is not None else None
    stated = (run.result or {}).get("direction")
    if declared is None or stated == declared:
        return None
    return f"result.json's metric direction ({stated}) is not the task's ({declared})"


def record_workspaces(initial: dict[str, str], records: list[dict]):
    """(manifest before, manifest after) of each record's workspace, in order.

    A linear run's record changes the workspace the record before it left. A tree-search node
    (a record with "node") changes its PARENT node's workspace, or the initial one for a root, so
    each node's files are those of its own line of descent, not of the node made just before. A
    record without a node (the search's closing record) is a delta from every delta applied in
    order, as a resumed run replays them, so that it leaves the submitted node's workspace.
    """
    from mlab.run.checkout import node_manifests
    from mlab.snapshots import apply_delta

    nodes = node_manifests(initial, records)
    linear = dict(initial)
    for record in records:
        delta = record.get("snapshot") or {}
        number = record.get("node")
        if isinstance(number, int) and not isinstance(number, bool):
            parent = record.get("parent")
            yield (nodes.get(parent, initial) if isinstance(parent, int) else initial), nodes[number]
        else:
            before = dict(linear)
            after = dict(before)
            apply_delta(after, delta)
            yield before, after
        apply_delta(linear, delta)


def read_scores(run_dir: Path) -> list[dict] | None:
    """The rows of RUN_DIR/scores.jsonl (None when there is none), read as the trace is: up to the
    first line that is not a row (not JSON, or not of the shape spec/scores.schema.json gives one),
    which is said once on stderr, naming the file and line. `mlab eval --intermediate` scores every
    step again and rewrites the file."""
    from mlab.bounded_json import MAX_TRACE_BYTES, UntrustedFile, loads, read_bytes, shape_problem, shapes_fit

    path = Path(run_dir) / SCORES
    try:
        lines = read_bytes(path, MAX_TRACE_BYTES).decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return None
    except UntrustedFile as problem:
        raise RunError(str(problem)) from None
    except OSError as problem:
        raise RunError(f"cannot read {path}: {problem.strerror or problem}") from None
    rows, numbers, broken = [], [], None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(loads(line, what="the line"))
        except ValueError as error:
            broken = number, str(error) if isinstance(error, (TooDeep, TooLarge)) else f"it is not JSON ({error})"
            break
        numbers.append(number)
    if not shapes_fit("scores", rows):   # all the rows at once; row by row only to say which is not one
        for index, row in enumerate(rows):
            problem = shape_problem("scores", row)
            if problem is not None:
                rows, broken = rows[:index], (numbers[index], problem)
                break
    if broken is not None:
        note_once(f"{path} line {broken[0]} is not a row of scores: {broken[1]}; the rows before it are read")
    return rows


def _read_json(path: Path, schema: str | None = None) -> dict | None:
    """A run folder's JSON object, read as hostile data (mlab.bounded_json); RunError saying what is
    wrong with it, None when there is none."""
    from mlab.bounded_json import UntrustedFile, read_json

    try:
        return read_json(path, schema=schema)
    except FileNotFoundError:
        return None
    except UntrustedFile as problem:
        raise RunError(str(problem)) from None
    except OSError as problem:
        raise RunError(f"cannot read {path}: {problem}") from None


def load_run(run_dir: Path) -> LoadedRun:
    """Read one run folder (a clear error when it is not one)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a folder; give a run folder (runs/<run-id>)")
    meta = read_run_meta(run_dir)
    result = _read_json(run_dir / RESULT, schema="result")
    # models.json only tells the models of an unfinished run: a finished one's result.json has them
    return LoadedRun(run_dir.resolve(), meta, result, None if result is not None else _read_json(run_dir / MODELS))


def find_run_dirs(folder: Path) -> list[Path]:
    """Every run folder at or under `folder` (a folder holding run.json), sorted by path.

    A run folder is not searched further (its workspace and objects can be large).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    if (folder / RUN_JSON).is_file():
        return [folder]
    found = []
    for here, dirs, files in os.walk(folder):
        if RUN_JSON in files:
            found.append(Path(here))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    return sorted(found)


def load_runs(paths: list[Path], skipped: list | None = None) -> list[LoadedRun]:
    """Runs named directly or found under folders; an error when there is none.

    Plain files among the paths are passed over: `mlab eval runs/*` also matches the index.html
    that `mlab view runs` writes there (and a CSV written by `mlab eval -o`). A run folder that
    cannot be read, among several, is left out: noted in `skipped` ({"run", "reason"}) when given,
    else said on stderr.
    """
    import sys

    from mlab.text import printable

    runs: list[LoadedRun] = []
    seen: set[Path] = set()
    found = [run_dir for path in paths if not Path(path).is_file() for run_dir in find_run_dirs(Path(path))]
    for run_dir in found:
        real = run_dir.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            runs.append(load_run(run_dir))
        except RunError as problem:
            if len(found) == 1:
                raise
            # one unreadable run (damaged, or hostile: a run folder may come from elsewhere) is left out, saying why
            if skipped is not None:
                skipped.append({"run": str(run_dir), "reason": str(problem)})
            else:
                print(f"mlab: left out {printable(run_dir)}: {printable(problem)}", file=sys.stderr)
    if not runs:
        raise UsageError(f"no run folders (folders holding {RUN_JSON}) in {', '.join(str(p) for p in paths)}")
    return runs
