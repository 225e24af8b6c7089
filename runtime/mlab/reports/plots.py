"""The report's PNG plots (matplotlib, Agg backend: no display needed).

Each plot splits data variants into separate panels or lines, and shows each agent × model
as "agent · model" (a demonstration's model name carries "(demonstration)").
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

GRID_POINTS = 60
NO_VALID_SUBMISSION = "no valid submission"
NO_RUNS = "no runs"
NOT_SHARED = "no task run by all"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def group_label(row) -> str:
    return f"{row['agent']} · {row['model']}"


def _variant_title(variant: str, several: bool) -> str:
    return f" — data {variant}" if several else ""


def success_heatmap(per_task: pd.DataFrame, path: Path) -> Path:
    """Success rate per task (rows) × agent · model (columns), one panel per data variant."""
    plt = _pyplot()
    variants = sorted(per_task["data_variant"].unique())
    frame = per_task.assign(group=per_task.apply(group_label, axis=1))
    groups = sorted(frame["group"].unique())
    tasks_max = max(frame.groupby("data_variant")["task"].nunique())
    figure, axes = plt.subplots(1, len(variants), squeeze=False,
                                figsize=(2.2 + 1.9 * len(groups) * len(variants), 1.6 + 0.55 * tasks_max))
    for axis, variant in zip(axes[0], variants):
        part = frame[frame["data_variant"] == variant]
        grid = part.pivot(index="task", columns="group", values="success_rate").reindex(columns=groups)
        runs = part.pivot(index="task", columns="group", values="runs").reindex(columns=groups)
        image = axis.imshow(grid.to_numpy(float), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        axis.set_xticks(range(len(groups)), [g.replace(" · ", "\n") for g in groups], fontsize=8)
        axis.set_yticks(range(len(grid.index)), grid.index, fontsize=9)
        for (i, j), value in np.ndenumerate(grid.to_numpy(float)):
            if np.isnan(value):
                axis.text(j, i, "no runs", ha="center", va="center", fontsize=8, color="grey")
            else:
                axis.text(j, i, f"{value:.0%}\nn={int(runs.iloc[i, j])}", ha="center", va="center", fontsize=8,
                          color="black" if value > 0.6 else "white")
        axis.set_title(f"success rate{_variant_title(variant, len(variants) > 1)}", fontsize=10)
    figure.colorbar(image, ax=axes[0].tolist(), fraction=0.04, pad=0.02)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return path


def improvement_bars(per_task: pd.DataFrame, over_tasks: pd.DataFrame, path: Path) -> Path:
    """Average improvement with 95% intervals per task and over tasks, bars per agent · model."""
    plt = _pyplot()
    variants = sorted(per_task["data_variant"].unique())
    overall = over_tasks.assign(task="all tasks")
    frame = pd.concat([per_task, overall], ignore_index=True)
    frame["group"] = frame.apply(group_label, axis=1)
    groups = sorted(frame["group"].unique())
    figure, axes = plt.subplots(len(variants), 1, squeeze=False,
                                figsize=(max(6.0, 1.2 * frame["task"].nunique() * max(1, len(groups)) ** 0.5 + 3),
                                         3.4 * len(variants)))
    width = 0.8 / max(len(groups), 1)
    for axis, variant in zip(axes[:, 0], variants):
        part = frame[frame["data_variant"] == variant]
        tasks = sorted(t for t in part["task"].unique() if t != "all tasks") + ["all tasks"]
        for index, group in enumerate(groups):
            rows = part[part["group"] == group].set_index("task").reindex(tasks)
            ran = rows["runs"].notna().to_numpy()  # no row: the group never ran the task (or, for "all tasks",
            # ran no task that every group ran), which is not the same as no valid submission
            values = 100 * rows["avg_improvement"].to_numpy(float)
            low = values - 100 * rows["avg_improvement_low"].to_numpy(float)
            high = 100 * rows["avg_improvement_high"].to_numpy(float) - values
            positions = np.arange(len(tasks)) + (index - (len(groups) - 1) / 2) * width
            bars = axis.bar(positions, np.nan_to_num(values), width, label=group,
                            yerr=np.nan_to_num(np.vstack([low, high])), capsize=3)
            # No bar and a 0% bar look alike: say which is which on the axis.
            for position, value, bar, task, has_runs in zip(positions, values, bars, tasks, ran):
                if np.isnan(value):
                    why = NO_VALID_SUBMISSION if has_runs else NOT_SHARED if task == "all tasks" else NO_RUNS
                    axis.text(position, 0, why, rotation=90, ha="center", va="bottom", fontsize=7, color="dimgrey")
                elif value == 0:
                    axis.text(position, 0, "0%", ha="center", va="bottom", fontsize=7, color=bar.get_facecolor())
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set_xticks(range(len(tasks)), tasks, fontsize=9)
        axis.set_ylabel("average improvement (%)")
        axis.set_title("average improvement over valid submissions, 95% bootstrap intervals; "
                       "all tasks: those every agent · model ran"
                       + _variant_title(variant, len(variants) > 1), fontsize=10)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _curve(points: list[tuple[float, float]], grid: np.ndarray) -> np.ndarray:
    """The best value reached by each grid point: of the points at or before it, the largest value
    that is not NaN (NaN before the first such point, and where a point's position is NaN it is
    never reached)."""
    if not points:
        return np.full(grid.shape, np.nan)
    positions, values = np.array(points, dtype=float).T
    order = np.argsort(positions, kind="stable")   # NaN positions last, past every grid point
    best = np.fmax.accumulate(values[order])       # fmax passes over NaN
    reached = np.searchsorted(positions[order], grid, side="right")
    return np.where(reached > 0, best[np.maximum(reached - 1, 0)], np.nan)


def anytime_curves(curves: dict[str, list[dict[str, list]]], path: Path) -> Path:
    """Best improvement so far (median over runs) and share of runs successful so far, against
    step, elapsed time and cost; one line per agent · model (· variant). Each run is its rows of
    scores as columns (mlab.reports.score_rows.score_columns), None where a row has no value."""
    plt = _pyplot()
    axes_spec = [("step", "step"), ("elapsed_s", "elapsed time (min)"), ("cost", "cost (USD)")]
    figure, axes = plt.subplots(2, 3, figsize=(14, 7.5), squeeze=False)
    spent = any((value or 0) > 0 for runs in curves.values() for run in runs for value in run["cost"])
    unpriced = sum(1 for runs in curves.values() for run in runs if None in run["cost"])
    for row_axes in axes:
        if not spent:
            row_axes[2].text(0.5, 0.5, "no cost recorded\n(offline models or unknown prices)", ha="center",
                             va="center", transform=row_axes[2].transAxes, color="grey")
        elif unpriced:  # an unknown price is no point at $0: such runs are left off the cost axis, and said so
            row_axes[2].text(0.02, 0.98, f"{unpriced} run(s) of unknown price left out", ha="left", va="top",
                             transform=row_axes[2].transAxes, color="grey", fontsize=8)
    for group, runs in sorted(curves.items()):
        # a missing or null improvement is no value, a missing or null success none (a row of
        # scores.jsonl need hold only its step and score)
        columns = [{name: r[name] for name in ("step", "elapsed_s", "cost")} |
                   {"improvement": [np.nan if value is None else value for value in r["improvement"]],
                    "success": [1.0 if value else 0.0 for value in r["success"]]} for r in runs]
        for column, (field, title) in enumerate(axes_spec):
            usable = [c for c in columns if c[field] and None not in c[field]]
            if not usable or (field == "cost" and not spent):
                continue
            top = max(max(c[field]) for c in usable)
            grid = np.linspace(0, top, GRID_POINTS) if top > 0 else np.zeros(1)
            gains = np.vstack([_curve(list(zip(c[field], c["improvement"])), grid) for c in usable])
            wins = np.vstack([_curve(list(zip(c[field], c["success"])), grid) for c in usable])
            scale = 60.0 if field == "elapsed_s" else 1.0
            with np.errstate(all="ignore"):
                median = np.array([np.nanmedian(c) if np.any(~np.isnan(c)) else np.nan for c in gains.T])
            axes[0][column].plot(grid / scale, 100 * median, label=group, marker="." if len(grid) == 1 else None)
            axes[1][column].plot(grid / scale, 100 * np.nan_to_num(wins).mean(axis=0), label=group,
                                 marker="." if len(grid) == 1 else None)
    for column, (_, title) in enumerate(axes_spec):
        axes[0][column].set_ylabel("best improvement so far (%, median)")
        axes[1][column].set_ylabel("runs successful so far (%)")
        axes[1][column].set_xlabel(title)
        axes[0][column].set_xlabel(title)
    axes[0][0].legend(fontsize=8)
    figure.suptitle("anytime performance: the best snapshot up to each point (intermediate scores)", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def tree_anytime(curves: pd.DataFrame, path: Path) -> Path:
    """Best validation score so far against nodes made, one panel per data variant × task (scores
    are on the task's own metric), a line per agent · model (median over its runs, each run
    faint); each run's chosen node is a star at its validation score, and a cross at the test
    score the evaluator gave it."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    panels = sorted({(v, t) for v, t in zip(curves["data_variant"], curves["task"])})
    several = curves["data_variant"].nunique() > 1
    figure, axes = plt.subplots(1, len(panels), squeeze=False, figsize=(5.2 * len(panels), 3.8))
    for axis, (variant, task) in zip(axes[0], panels):
        part = curves[(curves["data_variant"] == variant) & (curves["task"] == task)]
        direction = part["direction"].dropna().iloc[0] if part["direction"].notna().any() else None
        for index, ((agent, model), group) in enumerate(sorted(part.groupby(["agent", "model"]))):
            colour = f"C{index % 10}"
            table = group.pivot_table(index="node", columns="run_id", values="best_validation", aggfunc="first")
            for run_id in table.columns:
                axis.plot(table.index, table[run_id].astype(float), color=colour, alpha=0.25, linewidth=1)
            with np.errstate(all="ignore"):
                median = table.astype(float).median(axis=1, skipna=True)
            axis.plot(median.index, median.to_numpy(), color=colour, linewidth=2, label=f"{agent} · {model}",
                      marker="." if len(median) < 30 else None)
            chosen = group[group["submitted"]]
            axis.scatter(chosen["node"], chosen["validation"].astype(float), marker="*", s=140, color=colour,
                         edgecolor="black", zorder=3, label=f"chosen node (validation), {agent}")
            tested = chosen.dropna(subset=["test_score"]) if "test_score" in chosen else chosen.iloc[0:0]
            if not tested.empty:
                axis.scatter(tested["node"], tested["test_score"].astype(float), marker="x", s=70, color=colour,
                             zorder=3, label=f"chosen node (test score), {agent}")
        axis.set_xlabel("nodes made")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        better = {"lower_is_better": " (lower is better)", "higher_is_better": " (higher is better)"}.get(direction, "")
        axis.set_ylabel("best validation score so far" + better)
        axis.set_title(f"{task}{_variant_title(variant, several)}", fontsize=10)
        axis.legend(fontsize=7)
    figure.suptitle("tree search: best validation score against nodes made", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def tokens_vs_success(frame: pd.DataFrame, path: Path) -> Path:
    """Each run's total tokens against its outcome, coloured by agent · model (· variant)."""
    plt = _pyplot()
    several = frame["data_variant"].nunique() > 1
    labels = frame.apply(group_label, axis=1) + (" · " + frame["data_variant"] if several else "")
    figure, axis = plt.subplots(figsize=(8, 3.8))
    rng = np.random.default_rng(0)  # jitter only, so that equal outcomes do not hide each other
    for group in sorted(labels.unique()):
        part = frame[labels == group]
        y = part["success"].astype(float).to_numpy() + rng.uniform(-0.12, 0.12, len(part))
        axis.scatter(part["total_tokens"], y, label=group, alpha=0.75, s=28)
    axis.set_yticks([0, 1], ["no success", "success"])
    axis.set_ylim(-0.5, 1.5)
    axis.set_xlabel("tokens used by the run (all tiers)")
    tokens = frame["total_tokens"].astype(float)
    if (tokens > 0).all() and tokens.max() / max(tokens.min(), 1) > 50:
        axis.set_xscale("log")
    axis.set_title("tokens against success", fontsize=10)
    axis.legend(fontsize=8, loc="center right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
