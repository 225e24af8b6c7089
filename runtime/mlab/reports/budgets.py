"""Score at a budget (`mlab eval --at`): what a run would have scored had it been stopped at a
wall time, a token count or a cost, from the snapshots it already holds.

A budget is a kind (time, tokens or cost) and an amount, absolute (`1h`, `100k`, `$1`) or a
share of the run's own limit of that kind (`25%`). At a budget, the run is taken as it stood
after the last step whose record ended at or before it (time: the record's `elapsed_s`;
tokens and cost: the sum of the model calls of the records up to it):

- a linear agent submits its workspace as it is, so the point is that step's snapshot, with
  the submission file it held then (none yet: "no submission", a failure, never a 0);
- a tree search submits the node its own selection rule chooses (mlab.search.tree's
  `choose_submitted`: the best valid node by validation, or by holdout among the best few)
  among the nodes finished by then; none valid yet is "no submission" too;
- a budget at or past the run's end takes the run's final result (result.json).

The snapshot is scored by the harness's scorer, as `mlab eval --intermediate` scores steps
(snapshot_score.score_snapshot: the confined reads of the submission, the timed scorer beside the
starter for runtime metrics). Nothing is scored twice: a step that scores.jsonl already holds
takes its score from there, and every snapshot scored here is kept in RUN_DIR/budgets.json
under its digest (the submission file's SHA-256 for a tabular metric, the whole workspace's
manifest digest otherwise), beside the points themselves, so a second `eval --at` and the
report read them back without scoring anything.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from mlab.errors import RunError, UsageError
from mlab.limits import parse_duration
from mlab.standard_json import dumps, write_json
from mlab.reports.runs import LoadedRun, task_document
from mlab.reports.snapshot_score import judge_snapshot, snapshot_key, step_workspaces

BUDGETS = "budgets.json"
BUDGETS_VERSION = 1
BUDGETS_KEY = "budgets.key"   # under MLAB_CACHE: the key budgets.json's seal is made with
KINDS = ("time", "tokens", "cost")
# a point's status: scored, or why it has no score; only "not applicable" is left out of rates
SCORED, NO_SUBMISSION, INVALID, NOT_APPLICABLE = "scored", "no submission", "invalid submission", "not applicable"
_TOKEN_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_EXAMPLES = "e.g. --at time=1h,2h  --at tokens=100k,1M  --at 'cost=$1,$5'  --at time=25%,50%"


@dataclass(frozen=True)
class Budget:
    """One point: a kind and an amount (seconds, tokens or dollars), or a share of the run's limit."""

    kind: str
    label: str                  # as written, e.g. "1h", "100k", "$1", "25%"
    amount: float | None        # absolute amount; None for a share of the limit
    share: float | None = None  # 0.25 for "25%"

    @property
    def name(self) -> str:
        """The point's name in rows and tables: `time_1h`, `tokens_100k`, `cost_1`, `time_25pct`."""
        return f"{self.kind}_{self.label.replace('$', '').replace('%', 'pct')}"

    @property
    def column(self) -> str:
        return f"score_at_{self.name}"

    def amount_for(self, run: LoadedRun) -> float | None:
        """The budget in the run's own units (a share of a limit the run does not have: None)."""
        if self.share is None:
            return self.amount
        limit = (run.meta.get("limits") or {}).get(self.kind)
        return None if limit is None else self.share * float(limit)


# -- parsing --------------------------------------------------------------------------------

def _amount(kind: str, text: str) -> float:
    """The absolute amount of one budget of `kind` (a usage error naming the text otherwise)."""
    if kind == "time":
        try:
            value = parse_duration(text)
        except UsageError:
            raise UsageError(f"--at time={text}: a time budget is a duration, e.g. 90s, 30m, 4h or 1h30m") from None
    elif kind == "tokens":
        match = re.fullmatch(r"(\d+(?:\.\d+)?)([kmg]?)", text.lower())
        if not match:
            raise UsageError(f"--at tokens={text}: a token budget is a count, e.g. 50000, 100k or 1M")
        value = float(match.group(1)) * _TOKEN_SCALE[match.group(2)]
    else:
        match = re.fullmatch(r"\$?(\d+(?:\.\d+)?)", text)
        if not match:
            raise UsageError(f"--at cost={text}: a cost budget is in dollars, e.g. $1, 0.5 or $12.50")
        value = float(match.group(1))
    if not value > 0:
        raise UsageError(f"--at {kind}={text}: a budget must be more than 0")
    return value


def _budget(kind: str, text: str) -> Budget:
    if not text:
        # an unquoted `cost=$1,$5` reaches here as `cost=,`: the shell took $1 and $5 for its own
        hint = "; quote a dollar sign in the shell: --at 'cost=$1,$5'" if kind == "cost" else ""
        raise UsageError(f"--at {kind}=: a budget is missing ({_EXAMPLES}){hint}")
    if text.endswith("%"):
        try:
            share = float(text[:-1]) / 100
        except ValueError:
            share = math.nan
        if not 0 < share <= 1:
            raise UsageError(f"--at {kind}={text}: a share of the run's {kind} limit is a percentage "
                             "above 0 and at most 100, e.g. 25%")
        return Budget(kind, text, None, share)
    return Budget(kind, text, _amount(kind, text))


def parse_budgets(options: list[str]) -> list[Budget]:
    """The budgets of every `--at` option, in order, each once.

    An option is `KIND=A,B,...`; a later item `KIND=...` in the same option starts another kind
    (`time=1h,2h,tokens=100k`). Kinds are time (1h, 90m, 1h30m, 3600), tokens (100k, 1M), cost
    ($1, 0.5) and, for any kind, a share of the run's own limit (25%).
    """
    budgets: dict[str, Budget] = {}
    for option in options:
        kind = None
        for item in option.replace(" ", "").split(","):
            if "=" in item:
                kind, _, item = item.partition("=")
                if kind not in KINDS:
                    raise UsageError(f"--at {option}: unknown budget kind {kind!r}; kinds are "
                                     f"{', '.join(KINDS)} ({_EXAMPLES})")
            elif kind is None:
                raise UsageError(f"--at {option}: say the kind first, as in time={item} ({_EXAMPLES})")
            budget = _budget(kind, item)
            budgets.setdefault(budget.name, budget)
    if not budgets:
        raise UsageError(f"--at needs at least one budget ({_EXAMPLES})")
    return list(budgets.values())


# -- where a budget falls -------------------------------------------------------------------

def _spent(run: LoadedRun, kind: str) -> list[float | None]:
    """The amount of `kind` spent by the end of each record (None: not known, an unknown price)."""
    if kind == "time":
        return [float(record.get("elapsed_s") or 0.0) for record in run.records]
    totals, total = [], 0.0
    for record in run.records:
        for call in (record.get("model") or {}).get("calls", []):
            if kind == "tokens":
                total += int(call.get("prompt_tokens", 0)) + int(call.get("completion_tokens", 0))
            elif total is not None:
                total = None if call.get("cost") is None else total + float(call["cost"])
        totals.append(total)
    return totals


def _run_total(run: LoadedRun, kind: str, spent: list[float | None]) -> float | None:
    """What the whole run spent of `kind`: result.json's figure, else the last record's."""
    result = run.result or {}
    figure = {"time": "wall_time_s", "tokens": "total_tokens", "cost": "cost"}[kind]
    if run.finished and figure in result:
        return None if result[figure] is None else float(result[figure])
    return spent[-1] if spent else 0.0


def _selection(run: LoadedRun) -> str:
    search = run.agent_doc.search if run.agent_doc is not None else None
    return (search.select if search is not None else None) or "validation"


def _chosen_step(run: LoadedRun, last: int) -> tuple[int | None, int | None]:
    """(step, node) a tree search would have submitted with its records up to `last` (1-based)."""
    from mlab.search.tree import Node, Tree, choose_submitted

    task = task_document(run)
    direction = (run.result or {}).get("direction") or (task.metric.direction if task is not None else None)
    tree, steps = Tree(lower_is_better=direction == "lower_is_better"), {}
    for step, record in enumerate(run.records[:last], 1):
        number = record.get("node")
        if not isinstance(number, int) or isinstance(number, bool):
            continue
        try:
            tree.add(Node(number, record.get("parent"), record.get("operator") or "draft",
                          validation=record.get("validation"), buggy=bool(record.get("buggy", True)),
                          holdout=record.get("holdout")))
        except ValueError:  # a damaged trace: a node whose parent is missing is no candidate
            continue
        steps[number] = step
    node, _ = choose_submitted(tree, _selection(run))
    return (None, None) if node is None else (steps[node.id], node.id)


def locate(run: LoadedRun, budget: Budget) -> dict:
    """Where `budget` falls in the run: {"amount", "final", "step", "node", "status"}; a step of
    None with no status means nothing was submittable yet."""
    amount = budget.amount_for(run)
    place = {"amount": amount, "final": False, "step": None, "node": None, "status": None}
    if amount is None:
        place["status"] = NOT_APPLICABLE  # a share of a limit the run did not have
        return place
    spent = _spent(run, budget.kind)
    total = _run_total(run, budget.kind, spent)
    if total is None or any(value is None for value in spent):
        place["status"] = NOT_APPLICABLE  # a price unknown: the cost of any point is unknown
        return place
    if run.finished and amount >= total:
        place["final"] = True
        return place
    last = 0
    while last < len(spent) and spent[last] <= amount:
        last += 1
    if any(isinstance(r.get("node"), int) and not isinstance(r.get("node"), bool) for r in run.records):
        place["step"], place["node"] = _chosen_step(run, last)
    else:
        place["step"] = last
    return place


# -- scoring, cached ----------------------------------------------------------------------

class _Scorer:
    """Scores of one run's snapshots: scores.jsonl's, then budgets.json's, then the scorer's."""

    def __init__(self, run: LoadedRun, stored: dict):
        self.run = run
        self.snapshots: dict = dict(stored.get("snapshots") or {})
        self.added = False
        task = task_document(run)
        self.file = task.submission.file if task is not None and task.submission is not None else "submission.csv"
        self.tabular = task is not None and task.metric.kind == "tabular"
        self._manifests: list[dict] | None = None
        self._task = None

    def manifest(self, step: int) -> dict:
        if self._manifests is None:
            from mlab.snapshots import ObjectStore

            store = ObjectStore(self.run.dir / "objects", durable=False)
            try:
                self._manifests = step_workspaces(self.run, store)
            except (OSError, KeyError, ValueError) as problem:
                raise RunError(f"cannot score run {self.run.id} at a budget: its initial snapshot is not "
                               f"readable from {self.run.dir / 'objects'} ({problem})") from None
        return self._manifests[step]

    def score(self, step: int) -> dict:
        """{"score", "problem", "baseline"} of the snapshot after `step`."""
        rows = self.run.scores or []
        # scored by `mlab eval --intermediate`, of this trace (not of a shorter one, before a resume)
        row = next((r for r in rows if r.get("step") == step), None) if len(rows) == len(self.run.records) + 1 else None
        if row is not None and "problem" in row:
            return {"score": row.get("score"), "problem": row.get("problem"), "row": row}
        key, digest, whole = snapshot_key(self.manifest(step), self.file, self.tabular)
        if key not in self.snapshots:
            self.snapshots[key] = self._scored(step, digest, whole)
            self.added = True
        return self.snapshots[key]

    def _scored(self, step: int, digest: str | None, whole: bool) -> dict:
        import shutil
        import tempfile

        from mlab.build import load_build
        from mlab.errors import MlabError
        from mlab.reports.snapshot_score import score_snapshot
        from mlab.snapshots import ObjectStore

        if self._task is None:
            try:
                self._task = load_build(self.run.dir / "build", check_fresh=False).task(self.run.task)
            except MlabError as problem:
                raise RunError(f"cannot score run {self.run.id} at a budget: {problem}") from None
        scratch = Path(tempfile.mkdtemp(prefix="mlab-budget-"))
        try:
            store = ObjectStore(self.run.dir / "objects", durable=False)
            value, problem, timed = score_snapshot(self.run, self._task, store, step, self.file, digest, whole,
                                                   scratch / "workspace")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return {"score": value, "problem": problem, "baseline": timed}


def _judged(run: LoadedRun, scored: dict) -> tuple[float | None, bool]:
    """(improvement, success) of a snapshot's score, by the task's success rule."""
    if "row" in scored:
        return scored["row"].get("improvement"), bool(scored["row"].get("success"))
    result, task = run.result or {}, task_document(run)
    baseline = (result.get("baseline") or {}).get("value") if run.finished else (
        task.baseline.value if task is not None else None)
    direction = result.get("direction") or (task.metric.direction if task is not None else None)
    threshold = result.get("threshold") if run.finished else (task.success.improvement if task is not None else None)
    return judge_snapshot(scored.get("score"), scored.get("baseline"), baseline, direction, threshold)


def _point(run: LoadedRun, budget: Budget, scorer: _Scorer) -> dict:
    place = locate(run, budget)
    point = {"kind": budget.kind, "label": budget.label, "share": budget.share, "amount": place["amount"],
             "final": place["final"], "step": place["step"], "node": place["node"], "score": None,
             "improvement": None, "success": False, "status": place["status"], "problem": None}
    if place["status"] == NOT_APPLICABLE:
        point["success"] = None
    elif place["final"]:
        result = run.result or {}
        point.update(score=result.get("score"), improvement=result.get("improvement"),
                     success=bool(result.get("success")),
                     status=SCORED if result.get("score") is not None else
                     INVALID if result.get("submitted") else NO_SUBMISSION,
                     problem=result.get("submission_problem") or result.get("detail"))
    elif place["step"] is None:
        point.update(status=NO_SUBMISSION, problem="no valid node was finished by then")
    else:
        scored = scorer.score(place["step"])
        gain, success = _judged(run, scored)
        problem = scored.get("problem")
        point.update(score=scored.get("score"), improvement=gain, success=success, problem=problem,
                     status=SCORED if scored.get("score") is not None else
                     NO_SUBMISSION if (problem or "").startswith("no submission") else INVALID)
    return point


def read_budgets(run_dir: Path) -> dict:
    """RUN_DIR/budgets.json ({} when there is none; an unreadable one is scored afresh)."""
    from mlab.bounded_json import read_json
    from mlab.errors import MlabError

    try:
        document = read_json(Path(run_dir) / BUDGETS)   # bounded, never a pipe: the folder may come from elsewhere
    except (OSError, MlabError):
        return {}
    if document.get("version") != BUDGETS_VERSION or document.get("seal") != _seal(document):
        return {}   # another machine's, an edited or a forged one: its points are measured again
    if not isinstance(document.get("points"), dict) or not isinstance(document.get("snapshots"), dict):
        return {}
    return document


def _seal(document: dict) -> str | None:
    """An HMAC of the document's points and snapshot scores under this machine's key (MLAB_CACHE/
    budgets.key, made on first use): budgets.json is a cache of what this harness measured, and a
    point from a run folder made or edited elsewhere is never taken as measured. None without a key."""
    import hashlib
    import hmac
    import json

    from mlab.cache import cache_root

    path = cache_root() / BUDGETS_KEY
    key = _KEYS.get(path) or _machine_key(path)
    if key is None:
        return None
    body = json.dumps({"snapshots": document.get("snapshots"), "points": document.get("points")},
                      sort_keys=True, allow_nan=True, default=str).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest()


_KEYS: dict[Path, bytes] = {}   # each key file's bytes, read once a process (a report seals every run)


def _machine_key(path: Path) -> bytes | None:
    """The key at `path`, made (32 random bytes, readable by its owner only) when there is none."""
    import os
    import secrets

    try:
        key = path.read_bytes()
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
            key = path.read_bytes()
        except OSError:
            try:
                key = path.read_bytes()   # made meanwhile by another process
            except OSError:
                return None
    except OSError:
        return None
    _KEYS[path] = key
    return key


def budget_points(run: LoadedRun, budgets: list[Budget]) -> dict[str, dict]:
    """The point of each budget, by its name; computed points and scores are kept in budgets.json.

    A stored point is reused while the trace it was found in is the same length and the run's
    end is unchanged (a finished run's points never change)."""
    stored = read_budgets(run.dir)
    points = dict(stored.get("points") or {})
    fingerprint = {"records": run.record_count, "finished": run.finished}
    scorer = _Scorer(run, stored)
    fresh = False
    for budget in budgets:
        old = points.get(budget.name)
        if old is not None and old.get("trace") == fingerprint:
            continue
        points[budget.name] = {**_point(run, budget, scorer), "trace": fingerprint}
        fresh = True
    if fresh or scorer.added:
        try:
            document = {"version": BUDGETS_VERSION, "snapshots": scorer.snapshots, "points": points}
            write_json(run.dir / BUDGETS, {**document, "seal": _seal(json.loads(dumps(document)))})
        except OSError as problem:
            raise RunError(f"cannot write {run.dir / BUDGETS}: {problem.strerror or problem}") from None
    return {budget.name: points[budget.name] for budget in budgets}


def budget_fields(points: dict[str, dict]) -> dict:
    """The row fields of the points: score_at_<kind>_<value> and success_at_<kind>_<value>."""
    fields = {}
    for name, point in points.items():
        fields[f"score_at_{name}"] = point["score"]
        fields[f"success_at_{name}"] = point["success"]
    return fields
