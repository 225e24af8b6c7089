"""Medals and leaderboard percentiles from a task's thresholds (MLE-bench's rule).

MLE-bench (Chan et al. 2024, "MLE-bench: Evaluating Machine Learning Agents on Machine Learning
Engineering") grades a submission against the Kaggle leaderboard of its competition: a score at
least as good as the gold threshold earns gold, else at least as good as silver earns silver,
else bronze; "at least as good" is `>=` for a metric where higher is better and `<=` where lower
is. A run without a valid submission earns nothing. The headline figure is the share of runs
that earn any medal. With a leaderboard, a score's percentile is the share of its entries the
score beats (ties count half), so the median entry sits at 50.
"""
from __future__ import annotations

import math

import pandas as pd

from mlab.reports.stats import GROUP, TASK_GROUP, bootstrap_ci, stratified_bootstrap_ci

MEDALS = ("gold", "silver", "bronze")


def _at_least(score: float, threshold: float, lower_is_better: bool) -> bool:
    return score <= threshold if lower_is_better else score >= threshold


def medal(score: float | None, thresholds: dict, lower_is_better: bool) -> str | None:
    """"gold", "silver", "bronze" or None for `score` against `thresholds` ({medal: value})."""
    if score is None or not math.isfinite(score):
        return None
    for name in MEDALS:
        threshold = thresholds.get(name)
        if threshold is not None and _at_least(score, float(threshold), lower_is_better):
            return name
    return None


def percentile(score: float | None, leaderboard: list[float], lower_is_better: bool) -> float | None:
    """The percent of `leaderboard` entries that `score` beats (a tie counts half)."""
    if score is None or not math.isfinite(score) or not leaderboard:
        return None
    beaten = sum(1.0 if (score < entry if lower_is_better else score > entry) else 0.5 if score == entry else 0.0
                 for entry in leaderboard)
    return 100.0 * beaten / len(leaderboard)


def medal_frame(frame: pd.DataFrame, references: dict) -> pd.DataFrame:
    """The evaluation rows of tasks with thresholds (`references[task]["thresholds"]`), each with
    its `medal` ("" for none) and `any_medal` (1.0/0.0; NaN for a run ended by a task error)."""
    rows = frame[frame["task"].map(lambda task: bool((references.get(task) or {}).get("thresholds")))].copy()
    medals, any_medal = [], []
    for task, score, direction, failed in zip(rows["task"], rows["final_score"], rows["direction"],
                                              rows.get("task_error", pd.Series(False, index=rows.index))):
        score = None if score is None or (isinstance(score, float) and math.isnan(score)) else float(score)
        won = medal(score, references[task]["thresholds"], direction == "lower_is_better")
        medals.append(won or "")
        any_medal.append(float("nan") if failed else float(won is not None))
    rows["medal"] = medals
    rows["any_medal"] = any_medal
    return rows


def per_task(rows: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per task × agent × model: runs, each medal's count, and the any-medal rate with its interval."""
    out = []
    for key, group in rows.groupby(TASK_GROUP, sort=True):
        low, high = bootstrap_ci(group["any_medal"], seed)
        out.append({**dict(zip(TASK_GROUP, key)), "runs": len(group),
                    **{name: int((group["medal"] == name).sum()) for name in MEDALS},
                    "any_medal": float(group["any_medal"].mean()), "any_medal_low": low, "any_medal_high": high})
    return pd.DataFrame(out, columns=[*TASK_GROUP, "runs", *MEDALS, "any_medal", "any_medal_low", "any_medal_high"])


def pooled(rows: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per agent × model: the any-medal rate averaged over tasks (each task weighs the same)."""
    out = []
    for key, group in rows.groupby(GROUP, sort=True):
        tasks = [g["any_medal"].dropna().to_numpy() for _, g in group.groupby("task", sort=True)]
        tasks = [t for t in tasks if t.size]
        low, high = stratified_bootstrap_ci(tasks, seed)
        out.append({**dict(zip(GROUP, key)), "tasks": len(tasks), "runs": len(group),
                    **{name: int((group["medal"] == name).sum()) for name in MEDALS},
                    "any_medal": float(sum(t.mean() for t in tasks) / len(tasks)) if tasks else float("nan"),
                    "any_medal_low": low, "any_medal_high": high})
    return pd.DataFrame(out, columns=[*GROUP, "tasks", "runs", *MEDALS, "any_medal", "any_medal_low", "any_medal_high"])
