"""The numbers of a report: rates, averages and efficiency with 95% bootstrap intervals.

Every interval is a percentile bootstrap: `resamples` draws with replacement from the values
(of the runs; within each task for averages over tasks), the statistic of each draw, and the
2.5th and 97.5th percentiles of those. Each interval draws from its own generator seeded with
the report's seed, so a report is the same every time and no interval depends on the order
the others were computed in. Groups are always split by data variant, so lite and full runs
are never averaged together. A run ended as a `task error` (the task was found broken at run
time) is the task's fault, never the agent's: it is left out of every success rate and counted
in `task_errors` instead.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mlab.failure import FailureMode

TASK_ERROR = FailureMode.TASK_ERROR.value
RESAMPLES = 2000
LEVEL = 0.95
DRAW_VALUES = 1 << 19   # values resampled at once: 8 MB of indices and values, whatever the number of runs
GROUP = ["data_variant", "agent", "model"]
TASK_GROUP = ["data_variant", "task", "agent", "model"]
EFFICIENCY = {"total_tokens": "tokens", "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
              "cost": "cost (USD)", "wall_time_s": "wall time (s)", "compute_wall_s": "script wall time (s)",
              "compute_cpu_s": "script CPU time (s)"}


def bootstrap_ci(values, seed: int = 0, resamples: int = RESAMPLES) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the mean of `values` (NaNs dropped)."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return float("nan"), float("nan")
    means = resampled_means(data, np.random.default_rng(seed), resamples)
    low, high = np.percentile(means, [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)])
    return float(low), float(high)


def resampled_means(data: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """The means of `resamples` draws with replacement from `data`, drawn a block of rows at a time
    so that memory stays flat as the runs grow (all at once, 5,000 runs took 160 MB); the generator
    gives the same numbers in blocks as in one call, so the intervals are the same either way."""
    rows = max(1, DRAW_VALUES // data.size)
    blocks = [min(rows, resamples - start) for start in range(0, resamples, rows)]
    return np.concatenate([data[rng.integers(0, data.size, size=(block, data.size))].mean(axis=1) for block in blocks])


def stratified_bootstrap_ci(groups: list, seed: int = 0, resamples: int = RESAMPLES) -> tuple[float, float]:
    """Interval of the mean over groups of each group's mean; runs are resampled within each group."""
    arrays = [np.asarray(g, dtype=float) for g in groups]
    arrays = [a[~np.isnan(a)] for a in arrays]
    arrays = [a for a in arrays if a.size]
    if not arrays:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    per_group = np.stack([resampled_means(a, rng, resamples) for a in arrays])
    means = per_group.mean(axis=0)
    low, high = np.percentile(means, [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)])
    return float(low), float(high)


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    """The evaluation rows as a frame, with the tier sums the report uses."""
    frame = pd.DataFrame(rows)
    frame["prompt_tokens"] = sum(frame[f"prompt_tokens_{t}"] for t in ("main", "fast", "edit"))
    frame["completion_tokens"] = sum(frame[f"completion_tokens_{t}"] for t in ("main", "fast", "edit"))
    frame["task_error"] = frame["failure_mode"] == TASK_ERROR
    frame["success_value"] = frame["success"].astype(float).where(~frame["task_error"])
    frame["improvement_valid"] = frame["improvement"].where(frame["valid_submission"]).astype(float)
    frame["cost"] = pd.to_numeric(frame["cost"], errors="coerce")
    return frame


def shared_tasks(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The runs of the tasks that every agent · model of their data variant ran, and a sentence per
    variant naming the tasks left out and who ran them. The figures that rank or pair agents and
    models over tasks are computed on these runs, so that they compare the same work and a task an
    agent never ran is never counted as its failure."""
    keep, notes = [], []
    several = frame["data_variant"].nunique() > 1
    for variant, part in frame.groupby("data_variant", sort=True):
        ran = {key: set(group["task"]) for key, group in part.groupby(GROUP[1:], sort=True)}
        common = set.intersection(*ran.values())
        keep.append(part[part["task"].isin(common)])
        left = sorted(set(part["task"]) - common)
        if not left:
            continue
        who = "; ".join(f"{task} (run only by {', '.join(f'{a} · {m}' for (a, m), tasks in ran.items() if task in tasks)})"
                        for task in left)
        shown = ", ".join(sorted(common)) if common else "none, so no figure over tasks is given"
        notes.append(f"{f'Data {variant}: t' if several else 'T'}he figures over tasks (averages over tasks, the "
                     f"\"all tasks\" bars, AUP, normalised scores and medals over tasks, the cost frontier) are "
                     f"computed on the {len(common)} task(s) every agent · model ran ({shown}); left out, as not "
                     f"run by all: {who}.")
    return (pd.concat(keep) if keep else frame.iloc[:0]), notes


def per_task(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Success rate and average improvement (over valid submissions) per task × agent × model."""
    out = []
    for key, group in frame.groupby(TASK_GROUP, sort=True):
        valid = group["improvement_valid"].dropna()
        success_low, success_high = bootstrap_ci(group["success_value"], seed)
        gain_low, gain_high = bootstrap_ci(valid, seed)
        out.append({**dict(zip(TASK_GROUP, key)), "runs": len(group), "task_errors": int(group["task_error"].sum()),
                    "valid_submissions": len(valid),
                    "success_rate": group["success_value"].mean(), "success_rate_low": success_low,
                    "success_rate_high": success_high,
                    "avg_improvement": valid.mean() if len(valid) else float("nan"),
                    "avg_improvement_low": gain_low, "avg_improvement_high": gain_high,
                    "demo": bool(group["demo"].any())})
    return pd.DataFrame(out, columns=[*TASK_GROUP, "runs", "task_errors", "valid_submissions", "success_rate", "success_rate_low",
                                      "success_rate_high", "avg_improvement", "avg_improvement_low",
                                      "avg_improvement_high", "demo"])


def over_tasks(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The average over tasks of the per-task success rate and average improvement, per agent × model."""
    out = []
    for key, group in frame.groupby(GROUP, sort=True):
        tasks = [g for _, g in group.groupby("task", sort=True)]
        success = [g["success_value"].dropna().to_numpy() for g in tasks]
        success = [s for s in success if s.size]  # a task whose every run was a task error has no rate
        gains = [g["improvement_valid"].dropna().to_numpy() for g in tasks]
        gains = [g for g in gains if g.size]
        success_low, success_high = stratified_bootstrap_ci(success, seed)
        gain_low, gain_high = stratified_bootstrap_ci(gains, seed)
        out.append({**dict(zip(GROUP, key)), "tasks": len(tasks), "runs": len(group),
                    "task_errors": int(group["task_error"].sum()),
                    "success_rate": float(np.mean([s.mean() for s in success])) if success else float("nan"),
                    "success_rate_low": success_low, "success_rate_high": success_high,
                    "tasks_with_valid_submission": len(gains),
                    "avg_improvement": float(np.mean([g.mean() for g in gains])) if gains else float("nan"),
                    "avg_improvement_low": gain_low, "avg_improvement_high": gain_high,
                    "demo": bool(group["demo"].any())})
    return pd.DataFrame(out, columns=[*GROUP, "tasks", "runs", "task_errors", "success_rate", "success_rate_low",
                                      "success_rate_high", "tasks_with_valid_submission", "avg_improvement",
                                      "avg_improvement_low", "avg_improvement_high", "demo"])


def efficiency(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per agent × model: the mean per run of tokens, cost, wall time and script compute, with intervals."""
    out = []
    for key, group in frame.groupby(GROUP, sort=True):
        row = {**dict(zip(GROUP, key)), "runs": len(group), "cost_unknown_runs": int(group["cost"].isna().sum())}
        for column in EFFICIENCY:
            values = group[column].astype(float)
            low, high = bootstrap_ci(values, seed)
            row.update({column: values.mean(), f"{column}_low": low, f"{column}_high": high})
        row["demo"] = bool(group["demo"].any())
        out.append(row)
    return pd.DataFrame(out)


def failure_counts(frame: pd.DataFrame, labels: tuple[str, ...]) -> pd.DataFrame:
    """Per agent × model: unsuccessful runs, how many carry each label, and runs with hallucinated claims."""
    out = []
    for key, group in frame.groupby(GROUP, sort=True):
        failed = group[~group["success"]]
        names = failed["failure_labels"].map(_label_names)
        row = {**dict(zip(GROUP, key)), "runs": len(group), "unsuccessful": len(failed)}
        for label in labels:
            row[label] = sum(1 for found in names if label in found)
        row["runs with hallucinated claims (any outcome)"] = int((group["hallucinated_claims"] > 0).sum())
        row["demo"] = bool(group["demo"].any())
        out.append(row)
    return pd.DataFrame(out)


def _label_names(text: str) -> set[str]:
    """Label names of a failure_labels cell ("limit reached (steps); no submission")."""
    return {part.split(" (")[0].strip() for part in str(text or "").split(";") if part.strip()}


def best_versus_last(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per agent × model, over runs with intermediate scores: last-step and best-step success rates."""
    scored = frame[frame["best_success"].notna() & ~frame["task_error"]]
    out = []
    for key, group in scored.groupby(GROUP, sort=True):
        last = group["success_value"].to_numpy()
        best = group["best_success"].astype(float).to_numpy()
        low, high = bootstrap_ci(best - last, seed)
        out.append({**dict(zip(GROUP, key)), "runs": len(group), "last_step_success": last.mean(),
                    "best_step_success": best.mean(), "difference": (best - last).mean(),
                    "difference_low": low, "difference_high": high, "demo": bool(group["demo"].any())})
    return pd.DataFrame(out, columns=[*GROUP, "runs", "last_step_success", "best_step_success", "difference",
                                      "difference_low", "difference_high", "demo"])
