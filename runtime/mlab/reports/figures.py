"""The field's figures in `mlab report` and `mlab eval`: normalised scores, the share of the gap
closed, medals, AUP, paired comparisons and cost per dollar, from a task's reference points.

A task declares its reference points in its .mlab file (`reference LABEL N source "..."`,
`thresholds { gold X silver Y bronze Z source "..." }`); the run's build copy keeps them. The
normalised score (RE-Bench) runs from the run's baseline (0) to the reference solution's score
(1): the point labelled `reference`, else `expert`, else the first point that is not
`best_human`. The share of the gap closed (MLRC-Bench) runs to the point labelled `best_human`,
else the same reference. Medals (MLE-bench) need `thresholds`, or a `leaderboard` file, whose
scores give the thresholds by MLE-bench's rule and each run's percentile. The definitions are in
mlab.reports.normalised, medals and aup; docs/reports.md lists them with their papers.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from mlab.reports import aup, cost, medals, normalised, paired
from mlab.reports.runs import LoadedRun, task_document
from mlab.reports.tables import Table, text, with_interval

if TYPE_CHECKING:
    from mlab.documents.task import Task

REFERENCE_LABELS = ("reference", "expert")
BEST_HUMAN = "best_human"


def reference_points(task: Task | None) -> dict:
    """{"reference": N, "best_human": N, "thresholds": {...}, "thresholds_from": "declared" or
    "leaderboard", "leaderboard": [scores]} of a compiled task (keys only where known)."""
    refs = task.references if task is not None else None
    points = {p.label: float(p.value) for p in (refs.points if refs is not None else ()) if p.value is not None}
    out: dict = {}
    chosen = next((points[label] for label in REFERENCE_LABELS if label in points), None)
    if chosen is None:
        chosen = next((value for label, value in points.items() if label != BEST_HUMAN), None)
    if chosen is not None:
        out["reference"] = chosen
    if BEST_HUMAN in points:
        out["best_human"] = points[BEST_HUMAN]
    lower = task is not None and task.metric.direction == "lower_is_better"
    thresholds, origin = medals.task_thresholds(refs, lower)
    thresholds = {k: v for k, v in thresholds.items() if k in medals.MEDALS}
    if thresholds:
        out["thresholds"], out["thresholds_from"] = thresholds, origin
    scores = medals.leaderboard_scores(refs)
    if scores:
        out["leaderboard"] = scores
    return out


def task_references(runs: list[LoadedRun], labels: dict[str, str] | None = None) -> dict[str, dict]:
    """Reference points per task (under the report's task label), from the runs' build copies."""
    out: dict[str, dict] = {}
    for run in runs:
        label = (labels or {}).get(run.id, run.task)
        if label not in out:
            points = reference_points(task_document(run))
            if points:
                out[label] = points
    return out


def _finite(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def run_figures(run: LoadedRun, row: dict) -> dict:
    """The columns `mlab eval` adds to a run's row: normalised score, gap closed, medal,
    percentile (None: no leaderboard file), cost known, normalised score and success per dollar."""
    points = reference_points(task_document(run))
    score, start = _finite(row.get("final_score")), _finite(row.get("baseline"))
    value = normalised.normalised_score(score, start, points.get("reference"))
    closed = normalised.gap_closed(score, start, points.get("best_human", points.get("reference")))
    won = None
    if points.get("thresholds"):
        won = medals.medal(score, points["thresholds"], row.get("direction") == "lower_is_better") or ""
    placed = None
    if points.get("leaderboard"):
        placed = medals.percentile(score, points["leaderboard"], row.get("direction") == "lower_is_better")
    spent = _finite(row.get("cost"))
    per_dollar = spent is not None and spent > 0
    return {"normalised_score": value, "gap_closed": closed, "medal": won, "percentile": placed,
            "cost_known": row.get("cost") is not None,
            "normalised_per_dollar": value / spent if per_dollar and value is not None else None,
            "success_per_dollar": float(bool(row.get("success"))) / spent if per_dollar else None}


# -- the report's tables ------------------------------------------------------------------

def _columns(task: bool) -> list:
    columns = [("variant", text("data_variant"))] + ([("task", text("task"))] if task else [])
    return columns + [("agent", text("agent")), ("model", text("model"))]


def _plain(name: str, digits: int = 3):
    """'0.214 [0.027, 0.402]': a fixed number of decimals (1 shows as 1.000, not 1)."""
    def shown(r) -> str:
        value, low, high = r[name], r.get(f"{name}_low"), r.get(f"{name}_high")
        if pd.isna(value):
            return "–"
        return f"{value:.{digits}f}" + ("" if pd.isna(low) else f" [{low:.{digits}f}, {high:.{digits}f}]")
    return shown


def _points(name: str, unit: str = ""):
    """'37.5% [25.0, 50.0]': a figure already in points (a gap closed in %, a percentile), one decimal."""
    def shown(r) -> str:
        value, low, high = r[name], r[f"{name}_low"], r[f"{name}_high"]
        if pd.isna(value):
            return "–"
        return f"{value:.1f}{unit}" + ("" if pd.isna(low) else f" [{low:.1f}, {high:.1f}]")
    return shown


_gap = _points("gap_closed", "%")


def normalised_tables(scored: pd.DataFrame, together: pd.DataFrame, seed: int) -> list[Table]:
    """Per task from every run; over tasks from `together`, the runs of the tasks every pair ran."""
    if not scored["normalised"].notna().any():
        return []
    note = ("Normalised score (RE-Bench): 0 at the run's baseline, 1 at the task's reference solution; "
            "gap closed (MLRC-Bench): the share of the baseline-to-best-human gap. A run without a valid "
            "submission scores 0. Intervals: 95% bootstrap over seeds (within tasks when pooled).")
    figures = [("runs", text("runs")), ("normalised score [95% CI]", _plain("normalised")),
               ("gap closed [95% CI]", _gap)]
    tables = [Table("normalised_per_task", "Normalised score and gap closed per task", normalised.per_task(scored, seed),
                    _columns(True) + figures, note)]
    if together["normalised"].notna().any():
        tables.append(Table("normalised_pooled", "Normalised score and gap closed over tasks",
                            normalised.pooled(together, seed), _columns(False) + [("tasks", text("tasks"))] + figures,
                            note))
    return tables


_percentile = _points("percentile")


def medal_tables(frame: pd.DataFrame, together: pd.DataFrame, references: dict, seed: int) -> list[Table]:
    """Per task from every run; over tasks from `together`, the runs of the tasks every pair ran."""
    rows = medals.medal_frame(frame, references)
    if rows.empty:
        return []
    counts = [("runs", text("runs"))] + [(name, text(name)) for name in medals.MEDALS] + [
        ("any medal [95% CI]", lambda r: with_interval(r, "any_medal"))]
    if rows["percentile"].notna().any():
        counts.append(("percentile [95% CI]", _percentile))
    note = ("MLE-bench's rule: a final score at least as good as a medal's threshold earns it (best medal "
            "first); a run without a valid submission earns none.")
    derived = sorted(task for task, points in references.items() if points.get("thresholds_from") == "leaderboard")
    if derived:
        note += (" Thresholds of " + ", ".join(derived) + " come from the task's leaderboard file by the number "
                 "of teams (Kaggle's progression rule, as MLE-bench applies it).")
    if rows["percentile"].notna().any():
        note += " Percentile: the share of the leaderboard's entries the final score beats (a tie counts half)."
    tables = [Table("medals_per_task", "Medals per task", medals.per_task(rows, seed), _columns(True) + counts, note)]
    pooled = rows[rows.index.isin(together.index)]
    if not pooled.empty:
        tables.append(Table("medals_pooled", "Medals over tasks", medals.pooled(pooled, seed),
                            _columns(False) + [("tasks", text("tasks"))] + counts, note))
    return tables


def aup_tables(frame: pd.DataFrame, seed: int) -> list[Table]:
    table = aup.aup_table(frame, seed)
    if table.empty or table.groupby("data_variant").size().max() < 2:
        return []  # AUP ranks methods against each other: one method alone has nothing to compare with
    return [Table("aup", "AUP: area under the performance profiles over tasks", table, _columns(False) + [
        ("tasks", text("tasks")), ("AUP [95% CI]", _plain("aup")), ("tasks left out", text("tasks_left_out"))],
        "MLGym's summary over the tasks every method ran: each task's mean final score as a ratio to the best "
        "method's; a method that ran a task without a valid score fails it. Tasks with a score at or below 0 are "
        "left out.")]


def _difference(unit: str):
    """A paired difference shown in its figure's unit: a share as percentage points, a gap closed
    or a percentile in its own points, a normalised score as a number."""
    if unit == "share":
        return lambda r: with_interval(r, "difference")
    if unit == "points":
        return lambda r: "–" if pd.isna(r["difference"]) else f"{r['difference']:+.1f}" + (
            "" if pd.isna(r["difference_low"]) else f" [{r['difference_low']:.1f}, {r['difference_high']:.1f}]")
    return _plain("difference")


# figure → (its name in the table's title, its unit); the success rate stands in when no task has a
# reference point
PAIRED = {"normalised": ("normalised score", "number"), "gap_closed": ("gap closed, %", "points"),
          "any_medal": ("any medal", "share"), "percentile": ("leaderboard percentile", "points")}


def paired_tables(scored: pd.DataFrame, medal_rows: pd.DataFrame, seed: int) -> list[Table]:
    """Every two agent × model pairs compared on the (task, seed) runs they share, once per figure
    the tasks give: normalised score, gap closed, any medal, percentile (else the success rate)."""
    figures = [(scored, column) for column in ("normalised", "gap_closed") if scored[column].notna().any()]
    figures += [(medal_rows, column) for column in ("any_medal", "percentile")
                if not medal_rows.empty and medal_rows[column].notna().any()]
    if not figures:
        figures = [(scored, "success_value")]
    tables = []
    for frame, column in figures:
        table = paired.paired_table(frame, column, seed)
        if table.empty:
            continue
        title, unit = PAIRED.get(column, ("success", "share"))
        name = "paired_success" if column == "success_value" else f"paired_{column}"
        tables.append(Table(name, f"Paired differences on shared seeds ({title})", table,
                            [("variant", text("data_variant")), ("first", text("first")), ("second", text("second")),
                             ("pairs", text("pairs")), ("difference [95% CI]", _difference(unit)),
                             ("first wins", text("first_wins")), ("second wins", text("second_wins"))],
                            "Every two agent × model pairs on the (task, seed) runs they share; first minus second."))
    return tables


def frontier_tables(frontier: pd.DataFrame) -> list[Table]:
    if frontier.empty:
        return []
    return [Table("cost_frontier", "Cost and score per agent × model (the cost–score frontier)", frontier,
                  _columns(False) + [
                      ("runs", text("runs")), ("score", text("figure")), ("value [95% CI]", cost.score_cell),
                      ("success rate [95% CI]", lambda r: with_interval(r, "success_rate")),
                      ("cost per run [95% CI]", cost.cost_cell),
                      ("score per $", cost.per_dollar_cell("score_per_dollar")),
                      ("success per $", cost.per_dollar_cell("success_per_dollar")),
                      ("Pareto", lambda r: "yes" if r["pareto"] else ("–" if not r["cost_known"] else "no"))],
                  "Score: the normalised score when every task has a reference point, else the success rate; "
                  "averaged over tasks. Per $: the figure divided by the mean cost per run. Pareto: no other "
                  "pair costs at most as much and scores at least as much. A pair with an unpriced run shows "
                  f"\"{cost.UNKNOWN}\" and is not placed on the frontier.")]


def field_tables(frame: pd.DataFrame, references: dict, seed: int,
                 shared: pd.DataFrame | None = None) -> tuple[list[Table], pd.DataFrame, pd.DataFrame]:
    """The report's tables of the field's figures, the scored rows and the frontier frame. Per-task
    tables are of every run; those over tasks, which rank or pair agent × model pairs (pooled
    figures, AUP, paired differences, the frontier), of `shared` (stats.shared_tasks: the runs of the
    tasks every pair ran; default: every run)."""
    shared = frame if shared is None else shared
    scored = normalised.normalised_frame(frame, references)
    together = scored[scored.index.isin(shared.index)]  # shared is a selection of frame's rows
    frontier = cost.frontier_table(together, seed)
    tables = (normalised_tables(scored, together, seed) + medal_tables(frame, shared, references, seed)
              + aup_tables(shared, seed) + paired_tables(together, medals.medal_frame(shared, references), seed)
              + frontier_tables(frontier))
    return tables, scored, frontier
