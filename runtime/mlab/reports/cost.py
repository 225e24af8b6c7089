"""What the runs cost beside what they scored: the cost–score frontier and score per dollar.

Per data variant × agent × model pair: the mean cost per run (USD, from litellm's price map,
recorded per call in the trace), the pair's score and success rate averaged over tasks (each
task weighs the same), each with a 95% bootstrap interval, and score and success per dollar
(the figure divided by the mean cost per run). The score is the normalised score
(mlab.reports.normalised) when every task of the variant has a reference point, else the
success rate.

A pair is on the Pareto frontier when no other pair of its variant costs at most as much and
scores at least as much, one of the two strictly. Cost is known only when every run of the
pair was priced: a pair with a run whose model has no price is listed as "unknown price", never
placed at $0, and is left off the frontier (it can neither dominate nor be dominated). Offline
models cost exactly $0; their score per dollar is not a number ("no cost").
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mlab.reports.stats import GROUP, bootstrap_ci, stratified_bootstrap_ci
from mlab.reports.tables import percent, with_interval

UNKNOWN = "unknown price"
NORMALISED, SUCCESS = "normalised score", "success rate"
COLUMNS = [*GROUP, "figure", "tasks", "runs", "priced_runs", "cost_known", "cost", "cost_low", "cost_high",
           "score", "score_low", "score_high", "success_rate", "success_rate_low", "success_rate_high",
           "score_per_dollar", "success_per_dollar", "pareto"]


def _per_dollar(value: float, cost: float) -> float:
    if not math.isfinite(value) or not math.isfinite(cost) or cost <= 0:
        return float("nan")
    return value / cost


def _over_tasks(group: pd.DataFrame, column: str, seed: int) -> tuple[float, float, float]:
    arrays = [g[column].dropna().to_numpy(dtype=float) for _, g in group.groupby("task", sort=True)]
    arrays = [a for a in arrays if a.size]
    if not arrays:
        return float("nan"), float("nan"), float("nan")
    low, high = stratified_bootstrap_ci(arrays, seed)
    return float(np.mean([a.mean() for a in arrays])), low, high


def pareto(costs: list[float], scores: list[float]) -> list[bool]:
    """Which points (cost, score) no other point dominates (cheaper or equal, at least as good,
    one strictly); a point with an unknown (NaN) cost or score is never on the frontier."""
    known = [math.isfinite(c) and math.isfinite(s) for c, s in zip(costs, scores)]
    out = []
    for i, (cost, score) in enumerate(zip(costs, scores)):
        if not known[i]:
            out.append(False)
            continue
        out.append(not any(known[j] and costs[j] <= cost and scores[j] >= score
                           and (costs[j] < cost or scores[j] > score) for j in range(len(costs)) if j != i))
    return out


def frontier_table(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The cost and score of every agent × model pair, per data variant, with the Pareto flag.
    `frame`: the evaluation rows (with `normalised` when reference points are known)."""
    rows = []
    usable = frame[~frame.get("task_error", pd.Series(False, index=frame.index)).astype(bool)]
    for variant, part in usable.groupby("data_variant", sort=True):
        normal = "normalised" in part and part["normalised"].notna().all()
        figure_name, column = (NORMALISED, "normalised") if normal else (SUCCESS, "success_value")
        start = len(rows)
        for key, group in part.groupby(GROUP, sort=True):
            costs = pd.to_numeric(group["cost"], errors="coerce")
            known = bool(costs.notna().all())
            low, high = bootstrap_ci(costs, seed) if known else (float("nan"), float("nan"))
            cost = float(costs.mean()) if known else float("nan")
            score, score_low, score_high = _over_tasks(group, column, seed)
            success, success_low, success_high = _over_tasks(group, "success_value", seed)
            rows.append({**dict(zip(GROUP, key)), "figure": figure_name, "tasks": group["task"].nunique(),
                         "runs": len(group), "priced_runs": int(costs.notna().sum()), "cost_known": known,
                         "cost": cost, "cost_low": low, "cost_high": high,
                         "score": score, "score_low": score_low, "score_high": score_high,
                         "success_rate": success, "success_rate_low": success_low, "success_rate_high": success_high,
                         "score_per_dollar": _per_dollar(score, cost), "success_per_dollar": _per_dollar(success, cost)})
        flags = pareto([r["cost"] for r in rows[start:]], [r["score"] for r in rows[start:]])
        for row, flag in zip(rows[start:], flags):
            row["pareto"] = flag
    return pd.DataFrame(rows, columns=COLUMNS)


# -- how cost is shown --------------------------------------------------------------------

def dollars(value, digits: int = 4) -> str:
    """'$0.0123'; 'unknown price' for a missing cost (never '$0')."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    return f"${float(value):.{digits}f}"


def cost_cell(row: pd.Series) -> str:
    """A pair's mean cost per run with its interval, or why there is none."""
    if not row["cost_known"]:
        unpriced = int(row["runs"]) - int(row["priced_runs"])
        return UNKNOWN + ("" if unpriced == int(row["runs"]) else f" ({unpriced} of {int(row['runs'])} runs unpriced)")
    shown = dollars(row["cost"])
    if pd.isna(row["cost_low"]):
        return shown
    return f"{shown} [{dollars(row['cost_low'])}, {dollars(row['cost_high'])}]"


def efficiency_cost_cell(row: pd.Series) -> str:
    """The efficiency table's cost: unknown when any run of the group had no price."""
    unknown = int(row.get("cost_unknown_runs", 0) or 0)
    if unknown:
        return UNKNOWN + ("" if unknown == int(row["runs"]) else f" ({unknown} of {int(row['runs'])} runs unpriced)")
    return with_interval(row, "cost", as_percent=False, digits=4)


def per_dollar_cell(column: str):
    """A figure per dollar ('2.500 per $'), 'no cost' for $0, 'unknown price' when unknown."""
    def shown(row: pd.Series) -> str:
        if not row["cost_known"]:
            return UNKNOWN
        if row["cost"] == 0:
            return "no cost"
        value = row[column]
        return "–" if pd.isna(value) else f"{float(value):.3f} per $"
    return shown


def score_cell(row: pd.Series) -> str:
    value, low, high = row["score"], row["score_low"], row["score_high"]
    if pd.isna(value):
        return "–"
    if row["figure"] == SUCCESS:
        return percent(value) + ("" if pd.isna(low) else f" [{100 * low:.1f}, {100 * high:.1f}]")
    return f"{value:.3f}" + ("" if pd.isna(low) else f" [{low:.3f}, {high:.3f}]")


def unknown_pairs(table: pd.DataFrame) -> list[str]:
    """'agent · model' of the pairs whose cost is unknown, for the report's text and plot."""
    return [f"{r.agent} · {r.model}" for r in table.itertuples() if not r.cost_known]


# -- the plot -------------------------------------------------------------------------------

def frontier_plot(table: pd.DataFrame, path):
    """Score against mean cost per run, a point per agent × model with both intervals, the
    Pareto set joined by a line and ringed; one panel per data variant. Pairs of unknown price
    are named beside the panel, not drawn at $0."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed, as the report's other plots
    import matplotlib.pyplot as plt

    variants = sorted(table["data_variant"].unique())
    figure, axes = plt.subplots(1, len(variants), squeeze=False, figsize=(7.5 * len(variants), 4.6))
    for axis, variant in zip(axes[0], variants):
        part = table[table["data_variant"] == variant]
        known = part[part["cost_known"] & part["score"].notna()]
        success = part["figure"].iloc[0] == SUCCESS
        scale = 100.0 if success else 1.0
        for index, row in enumerate(known.itertuples()):
            x, y = row.cost, scale * row.score
            xerr = [[x - row.cost_low], [row.cost_high - x]] if not pd.isna(row.cost_low) else None
            yerr = [[y - scale * row.score_low], [scale * row.score_high - y]] if not pd.isna(row.score_low) else None
            axis.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o", color=f"C{index % 10}", capsize=3,
                          label=f"{row.agent} · {row.model}")
            if row.pareto:
                axis.scatter([x], [y], s=220, facecolors="none", edgecolors="black", linewidths=1.5, zorder=3)
        front = known[known["pareto"]].sort_values("cost")
        if len(front) > 1:
            axis.plot(front["cost"], scale * front["score"], color="black", linewidth=1, linestyle="--",
                      label="Pareto frontier")
        missing = [f"{r.agent} · {r.model}" for r in part.itertuples() if not r.cost_known]
        if missing:
            axis.text(1.02, 0.02, f"{UNKNOWN}:\n" + "\n".join(missing), transform=axis.transAxes, fontsize=8,
                      va="bottom", color="dimgrey")
        axis.set_xlabel("mean cost per run (USD)")
        axis.set_ylabel("success rate (%)" if success else "normalised score")
        several = f" — data {variant}" if len(variants) > 1 else ""
        axis.set_title(f"cost against {part['figure'].iloc[0]} (ringed: Pareto set){several}", fontsize=10)
        if not known.empty:
            axis.legend(fontsize=7, loc="best")
        else:
            axis.text(0.5, 0.5, "no pair with a known cost", ha="center", va="center", transform=axis.transAxes,
                      color="grey")
    figure.tight_layout()
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return path
