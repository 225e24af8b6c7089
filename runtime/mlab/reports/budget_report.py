"""The report's part on score at a budget: the points `mlab eval --at` kept in each run's
budgets.json, as a frame, a table of success rate at each budget and a plot of score against
time, tokens and cost.

Success at a budget follows the task's success rule on what the run would have submitted
then; a run with no submission (or an invalid one) at a budget is a failure there, and a
point that does not apply (a share of a limit the run did not have, a cost with an unknown
price) counts in no rate. A run ended as a task error counts in none either, as in every
success rate of the report. Scores are on the task's own metric, so each task is a panel.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mlab.reports.budgets import KINDS, NOT_APPLICABLE, SCORED, read_budgets
from mlab.reports.runs import LoadedRun
from mlab.reports.stats import TASK_ERROR, bootstrap_ci, stratified_bootstrap_ci
from mlab.reports.tables import Table, text, with_interval

_AXES = {"time": ("wall time", 1.0), "tokens": ("tokens (all tiers)", 1.0), "cost": ("cost (USD)", 1.0)}


def budget_frame(runs: list[LoadedRun], labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per finished run and stored budget point (empty when no run has any)."""
    rows = []
    for run in runs:
        if not run.finished:
            continue
        task_error = (run.result or {}).get("failure_mode") == TASK_ERROR
        for name, point in sorted((read_budgets(run.dir).get("points") or {}).items()):
            if point.get("kind") not in KINDS:
                continue
            applies = point.get("status") != NOT_APPLICABLE and not task_error
            rows.append({"data_variant": run.variant, "task": (labels or {}).get(run.id, run.task),
                         "agent": run.agent, "model": run.model, "run_id": run.id, "seed": run.seed,
                         "budget": name, "kind": point["kind"], "label": point.get("label"),
                         "share": point.get("share"), "amount": point.get("amount"),
                         "direction": (run.result or {}).get("direction"),
                         "score": point.get("score") if point.get("status") == SCORED else None,
                         "improvement": point.get("improvement"),
                         "success": float(bool(point.get("success"))) if applies else np.nan,
                         "status": point.get("status"), "final": bool(point.get("final"))})
    return pd.DataFrame(rows)


def _order(frame: pd.DataFrame) -> list[str]:
    """Budget names in reading order: kind, absolute before shares, then by amount."""
    first = frame.drop_duplicates("budget").copy()
    first["absolute"] = first["share"].isna()
    first["size"] = first["share"].fillna(first["amount"]).astype(float)
    first["kind_rank"] = first["kind"].map({kind: i for i, kind in enumerate(KINDS)})
    return list(first.sort_values(["kind_rank", "absolute", "size"], ascending=[True, False, True])["budget"])


ALL_TASKS = "all tasks"


def success_at_budgets(frame: pd.DataFrame, seed: int = 0,
                       shared: set[str] | None = None) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Per variant × task × agent × model, the success rate at each budget with its 95% interval
    and how many runs it is over; where an agent × model ran several tasks, a row "all tasks":
    the mean of its per-task rates, its interval resampling runs within each task (as the
    report's average over tasks), over the runs whose ids are in `shared` (the tasks every agent ·
    model ran, stats.shared_tasks; None: every run). With the (budget name, header) of each budget,
    in order."""
    order = _order(frame)
    headers = {row.budget: f"{row.kind} {row.label}" for row in frame.drop_duplicates("budget").itertuples()}
    out = []
    for key, group in frame.groupby(["data_variant", "agent", "model"], sort=True):
        tasks = sorted(group["task"].unique())
        for task in tasks + ([ALL_TASKS] if len(tasks) > 1 else []):
            part = group if task == ALL_TASKS else group[group["task"] == task]
            if task == ALL_TASKS and shared is not None:
                part = part[part["run_id"].isin(shared)]
                if part.empty:
                    continue
            row = {"data_variant": key[0], "task": task, "agent": key[1], "model": key[2],
                   "runs": part["run_id"].nunique()}
            for name in order:
                at = part[part["budget"] == name]
                row.update(_rate(at, name, seed, pooled=task == ALL_TASKS))
            out.append(row)
    table = pd.DataFrame(out)
    table["last"] = table["task"] == ALL_TASKS  # each group's pooled row after its tasks
    table = table.sort_values(["data_variant", "last", "task", "agent", "model"]).drop(columns="last")
    return table.reset_index(drop=True), [(name, headers[name]) for name in order]


def _rate(at: pd.DataFrame, name: str, seed: int, pooled: bool) -> dict:
    """The success rate at one budget, its interval and how many runs count in it."""
    values = at["success"].astype(float)
    counted = int(values.notna().sum())
    if pooled:
        per_task = [part["success"].astype(float).dropna() for _, part in at.groupby("task")]
        per_task = [v for v in per_task if len(v)]
        rate = float(np.mean([v.mean() for v in per_task])) if per_task else np.nan
        low, high = stratified_bootstrap_ci(per_task, seed)
    else:
        rate = values.mean() if counted else np.nan
        low, high = bootstrap_ci(values, seed)
    return {f"{name}_success": rate, f"{name}_success_low": low, f"{name}_success_high": high,
            f"{name}_runs": counted}


def budget_table(frame: pd.DataFrame, seed: int = 0, shared: set[str] | None = None) -> Table:
    """The report's table of success rate at each budget (raw numbers in budget_success.csv)."""
    rates, budgets = success_at_budgets(frame, seed, shared)
    columns = [("variant", text("data_variant")), ("task", text("task")), ("agent", text("agent")),
               ("model", text("model")), ("runs", text("runs"))]
    columns += [(f"{header} [95% CI]", lambda r, n=name: with_interval(r, f"{n}_success")) for name, header in budgets]
    return Table("budget_success", "Success rate at each budget", rates, columns,
                 "At each budget, a run counts with what it would have submitted by then (`mlab eval --at`): a "
                 "linear agent's workspace after the last step that ended by then, a tree search's node chosen by "
                 "its own rule among the nodes finished by then, the final result past the run's end. No "
                 "submission (or an invalid one) by then is a failure; a share of a limit the run did not have, "
                 "or a cost with an unknown price, counts in no rate.")


def _axes_of(frame: pd.DataFrame) -> list[tuple[str, bool]]:
    """(kind, share) of each x axis the points call for: an absolute axis and a share axis per kind."""
    present = {(kind, bool(share)) for kind, share in zip(frame["kind"], frame["share"].notna())}
    return [(kind, share) for kind in KINDS for share in (False, True) if (kind, share) in present]


def _time_scale(seconds: float) -> tuple[float, str]:
    return (3600.0, "h") if seconds >= 2 * 3600 else (60.0, "min") if seconds >= 120 else (1.0, "s")


def _mark_counts(axis, xs, means, counts, colour) -> None:
    """Beside each point, how many runs had a valid submission there; at a budget where none
    had, a cross on the axis says so (no point is not a score of 0)."""
    from matplotlib.transforms import blended_transform_factory

    on_axis = blended_transform_factory(axis.transData, axis.transAxes)
    for x, mean, count in zip(xs, means, counts):
        if np.isnan(mean):
            axis.plot([x], [0.02], marker="x", color=colour, transform=on_axis, clip_on=False)
            axis.text(x, 0.05, f"no valid\nsubmission ({count})", transform=on_axis, fontsize=6,
                      color=colour, ha="center", va="bottom")
        else:
            axis.annotate(count, (x, mean), textcoords="offset points", xytext=(4, 4), fontsize=6, color=colour)


def budget_plot(frame: pd.DataFrame, path: Path, seed: int = 0) -> Path:
    """Mean score at each budget over the runs with a valid submission there, with a 95%
    bootstrap band over runs (seeds), per agent · model, each point labelled with how many of
    the runs that is; a panel per task × axis (time, tokens, cost, and each as a share of the
    run's limit)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(v, t) for v, t in zip(frame["data_variant"], frame["task"])})
    axes_spec = _axes_of(frame)
    several = frame["data_variant"].nunique() > 1
    figure, axes = plt.subplots(len(panels), len(axes_spec), squeeze=False,
                                figsize=(4.6 * len(axes_spec), 3.4 * len(panels)))
    frame = frame.assign(group=frame["agent"] + " · " + frame["model"])
    groups = sorted(frame["group"].unique())
    for i, (variant, task) in enumerate(panels):
        part = frame[(frame["data_variant"] == variant) & (frame["task"] == task)]
        direction = part["direction"].dropna().iloc[0] if part["direction"].notna().any() else None
        for j, (kind, share) in enumerate(axes_spec):
            axis = axes[i][j]
            points = part[(part["kind"] == kind) & (part["share"].notna() == share)]
            x_of = points["share"] * 100 if share else points["amount"]
            scale, unit = _time_scale(float(x_of.max())) if kind == "time" and not share else (1.0, "")
            for index, group in enumerate(groups):
                mine = points[points["group"] == group]
                if mine.empty:
                    continue
                xs, means, lows, highs, counts = [], [], [], [], []
                for x, at in mine.groupby((mine["share"] * 100) if share else mine["amount"]):
                    scores = at["score"].dropna().astype(float)
                    low, high = bootstrap_ci(scores, seed)
                    xs.append(float(x) / scale)
                    means.append(scores.mean() if len(scores) else np.nan)
                    lows.append(low)
                    highs.append(high)
                    counts.append(f"{len(scores)}/{at['run_id'].nunique()}")
                colour = f"C{index % 10}"
                axis.plot(xs, means, marker="o", color=colour, label=group)
                axis.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)
                _mark_counts(axis, xs, means, counts, colour)
            title, _ = _AXES[kind]
            axis.set_xlabel(f"{title}, % of the run's limit" if share else f"{title}" + (f" ({unit})" if unit else ""))
            better = {"lower_is_better": " (lower is better)", "higher_is_better": " (higher is better)"}.get(
                direction, "")
            axis.set_ylabel("score at the budget" + better)
            axis.set_title(f"{task}" + (f" — data {variant}" if several else ""), fontsize=10)
            if kind == "tokens" and not share:
                axis.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
            axis.legend(fontsize=7)
    figure.suptitle("score at a budget: what each run would have submitted by then (mean, 95% bootstrap band)",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
