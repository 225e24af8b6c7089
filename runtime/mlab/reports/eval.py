"""Per-run evaluation rows (`mlab eval`), and the score of every step's snapshot.

A run's final score, baseline, improvement and success are read from its result.json (what
the run reported). With intermediate scoring, each step's workspace is restored from the
run's snapshots and scored with the task's metric; the scores go into runs/<id>/scores.jsonl
for the viewer, anytime curves and best-step success. A tabular metric reads only the
submission file, so only that file is restored, and a step whose submission did not change
reuses the score of the step before (a 200-step run scores each distinct submission once);
any other metric gets the whole workspace, restored with `checkout`, for every step that
changed it. With budgets (`mlab eval --at`), each row gains its score and success at each
budget (mlab.reports.budgets).
"""
from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

from mlab.documents.task import Task
from mlab.errors import MlabError, RunError
from mlab.limits import counted_steps, step_limit
from mlab.standard_json import write_lines
from mlab.reports.figures import run_figures
from mlab.reports.runs import SCORES, LoadedRun
from mlab.reports.snapshot_score import judge_snapshot, score_snapshot, snapshot_key, step_workspaces
from mlab.reports.taxonomy import findings
from mlab.run.hardware import hardware_class

TIERS = ("main", "fast", "edit")


# -- intermediate scores -----------------------------------------------------------------

def _step_usage(record: dict) -> tuple[int, float | None]:
    tokens, cost = 0, 0.0
    for call in (record.get("model") or {}).get("calls", []):
        tokens += int(call.get("prompt_tokens", 0)) + int(call.get("completion_tokens", 0))
        cost = None if cost is None or call.get("cost") is None else cost + float(call["cost"])
    return tokens, cost


def _baseline_value(run: LoadedRun, task: Task) -> float | None:
    if run.result is not None:
        return (run.result.get("baseline") or {}).get("value")
    return task.baseline.value if task.baseline.kind == "value" else None


def score_steps(run: LoadedRun) -> list[dict]:
    """The score of the workspace after every step (0: as prepared), with time and usage so far."""
    from mlab.build import load_build
    from mlab.snapshots import ObjectStore

    try:
        task = load_build(run.dir / "build", check_fresh=False).task(run.task)
    except MlabError as problem:
        raise RunError(f"cannot score the steps of run {run.id}: {problem}") from None
    view = task.view
    file = view.submission.file if view.submission and view.submission.file else "submission.csv"
    baseline = _baseline_value(run, view)
    direction, threshold = view.metric.direction, view.success.improvement
    tabular = view.metric.kind == "tabular"
    store = ObjectStore(run.dir / "objects", durable=False)
    workspaces = step_workspaces(run, store)
    scored: dict = {}
    rows = []
    tokens, cost = 0, 0.0
    scratch = Path(tempfile.mkdtemp(prefix="mlab-eval-"))
    try:
        for step in range(len(run.records) + 1):
            record = run.records[step - 1] if step else {}
            if step:
                used, spent = _step_usage(record)
                tokens += used
                cost = None if cost is None or spent is None else cost + spent
            key, digest, whole = snapshot_key(workspaces[step], file, tabular)
            if key not in scored:
                scored[key] = score_snapshot(run, task, store, step, file, digest, whole, scratch / f"step-{step}")
            value, problem, timed = scored[key]
            gain, success = judge_snapshot(value, timed, baseline, direction, threshold)
            rows.append({"step": step, "score": value, "improvement": gain, "success": success,
                         "elapsed_s": float(record.get("elapsed_s", 0.0)), "tokens": tokens,
                         "cost": None if cost is None else round(cost, 8),
                         "submission": digest, "problem": problem if value is None else None})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def write_scores(run: LoadedRun, rows: list[dict]) -> Path:
    """runs/<id>/scores.jsonl, replaced whole (a reader never sees half of it)."""
    path = run.dir / SCORES
    try:
        write_lines(path, rows)
    except OSError as problem:
        raise RunError(f"cannot write {path}: {problem.strerror or problem}") from None
    run.__dict__["scores"] = rows  # the cached property now holds what was written
    return path


# -- rows ------------------------------------------------------------------------------

def best_step(run: LoadedRun) -> dict | None:
    """The step whose snapshot scored best (the earliest among equals), from scores.jsonl."""
    rows = [r for r in (run.scores or []) if r.get("score") is not None and math.isfinite(r["score"])]
    if not rows:
        return None
    lower = (run.result or {}).get("direction") == "lower_is_better"
    return min(rows, key=lambda r: (r["score"] if lower else -r["score"], r["step"]))


def run_row(run: LoadedRun) -> dict:
    """One evaluation row of a run: what it is, how it scored, what it used, why it failed."""
    result = run.result or {}
    tiers = run.tiers
    claims, labels = findings(run)
    best = best_step(run)
    row = {
        "run_id": run.id, "task": run.task, "data_variant": run.variant, "agent": run.agent,
        "model": run.model, **{f"model_{t}": (tiers.get(t) or {}).get("model") for t in TIERS},
        "seed": run.seed, "demo": run.demo, "finished": run.finished,
        "metric": result.get("metric"), "metric_display": result.get("metric_display") or result.get("metric"),
        "direction": result.get("direction"),
        "final_score": result.get("score"),
        "best_score": best["score"] if best else None, "best_step": best["step"] if best else None,
        "baseline": (result.get("baseline") or {}).get("value"),
        "improvement": result.get("improvement"),
        "best_improvement": best["improvement"] if best else None,
        "threshold": result.get("threshold"), "success": bool(result.get("success")),
        "best_success": None if run.scores is None else
        any(r.get("success") for r in run.scores) or bool(result.get("success")),
        "submitted": bool(result.get("submitted")), "valid_submission": result.get("score") is not None,
        # (the trace is read only when result.json lacks them: an unfinished run)
        "steps": result["steps"] if "steps" in result else counted_steps(run.records, step_limit(run.meta)),
        "wall_time_s": result["wall_time_s"] if "wall_time_s" in result else
        (run.records[-1].get("elapsed_s") if run.records else 0.0),
    }
    tokens = result.get("tokens") or {}
    for tier in TIERS:
        row[f"prompt_tokens_{tier}"] = (tokens.get(tier) or {}).get("prompt", 0)
        row[f"completion_tokens_{tier}"] = (tokens.get(tier) or {}).get("completion", 0)
    compute = result.get("compute") or {}
    row.update({
        "total_tokens": result.get("total_tokens", 0), "cost": result.get("cost"),
        "compute_scripts": compute.get("scripts", 0), "compute_wall_s": compute.get("wall_s", 0.0),
        "compute_cpu_s": compute.get("cpu_s", 0.0), "compute_peak_memory_bytes": compute.get("peak_memory_bytes", 0),
        "compute_accelerator_s": compute.get("accelerator_s"), "task_version": run.task_version,
        "hardware_class": hardware_class(run.meta.get("hardware")),
        "end_reason": result.get("end_reason"), "failure_mode": result.get("failure_mode"),
        "failure_labels": "; ".join(label.text() for label in labels),
        "hallucinated_claims": len(claims), "run_dir": str(run.dir),
    })
    # a tree search's size and chosen node; the reply format a tool agent ran (its fallback or not)
    search = result.get("search") if isinstance(result.get("search"), dict) else {}
    form = result.get("reply_format") if isinstance(result.get("reply_format"), dict) else {}
    row.update({
        "search_policy": search.get("policy"), "search_nodes": search.get("nodes"),
        "search_valid_nodes": search.get("valid_nodes"), "submitted_node": search.get("submitted_node"),
        "submitted_validation": search.get("submitted_validation"),
        "reply_format_declared": form.get("declared"), "reply_format_ran": form.get("ran"),
        "reply_format_reason": form.get("reason"),
        # whether its scripts ran in the sandbox (None: a result from before result.json version 4)
        "sandboxed": (result.get("sandbox") or {}).get("sandboxed") if isinstance(result.get("sandbox"), dict) else None,
    })
    # the field's figures from the task's reference points, and cost per dollar (reports/figures.py)
    row.update(run_figures(run, row))
    return row


def evaluate_runs(runs: list[LoadedRun], intermediate: bool = False, on_run=None, at=None) -> list[dict]:
    """Rows of `runs`; with `intermediate`, every step is scored first (into scores.jsonl); with
    `at` (budgets.parse_budgets), each row gains the score and success at each budget."""
    rows = []
    for run in runs:
        if intermediate:
            write_scores(run, score_steps(run))
        rows.append(run_row(run))
        if at:
            from mlab.reports.budgets import budget_fields, budget_points

            rows[-1].update(budget_fields(budget_points(run, at)))
        run.release()  # what reports read later is kept; the trace is not
        if on_run:
            on_run(run, rows[-1])
    return rows
