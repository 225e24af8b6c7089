"""Medals and leaderboard percentiles from a task's thresholds (MLE-bench's rule).

MLE-bench (Chan et al. 2024, "MLE-bench: Evaluating Machine Learning Agents on Machine Learning
Engineering") grades a submission against the Kaggle leaderboard of its competition: a score at
least as good as the gold threshold earns gold, else at least as good as silver earns silver,
else bronze; "at least as good" is `>=` for a metric where higher is better and `<=` where lower
is. A run without a valid submission earns nothing. The headline figure is the share of runs
that earn any medal. With a leaderboard, a score's percentile is the share of its entries the
score beats (ties count half), so the median entry sits at 50.

A task that declares a leaderboard file and no `thresholds` gets its thresholds from the
leaderboard by the rule MLE-bench takes from Kaggle's progression system (kaggle.com/progression),
by the number of teams N, the leaderboard sorted best first and percentages rounded down (at
least one team): N < 100, gold the top 10%, silver 20%, bronze 40%; 100 <= N < 250, gold the top
10 teams, silver 20%, bronze 40%; 250 <= N < 1000, gold the top 10 + 0.2% of N, silver 50 teams,
bronze 100; N >= 1000, gold the top 10 + 0.2% of N, silver 5%, bronze 10%. A threshold is the
score of the last team inside the medal's places; the median threshold is the leaderboard's median.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from mlab.reports.stats import GROUP, TASK_GROUP, bootstrap_ci, stratified_bootstrap_ci

if TYPE_CHECKING:
    from mlab.documents.task import References

MEDALS = ("gold", "silver", "bronze")
PERCENTILE = ("percentile", "percentile_low", "percentile_high")


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


def medal_places(teams: int) -> dict[str, int]:
    """{medal: the number of top places that earn it} for a leaderboard of `teams` (>= 1) teams."""
    def share(percent: int) -> int:
        return max(1, teams * percent // 100)
    if teams < 100:
        places = {"gold": share(10), "silver": share(20), "bronze": share(40)}
    elif teams < 250:
        places = {"gold": 10, "silver": share(20), "bronze": share(40)}
    elif teams < 1000:
        places = {"gold": 10 + teams * 2 // 1000, "silver": 50, "bronze": 100}
    else:
        places = {"gold": 10 + teams * 2 // 1000, "silver": share(5), "bronze": share(10)}
    return {name: min(place, teams) for name, place in places.items()}


def leaderboard_thresholds(leaderboard: list[float], lower_is_better: bool) -> dict[str, float]:
    """{gold, silver, bronze, median: score} derived from a leaderboard's scores (any order)."""
    if not leaderboard:
        return {}
    ranked = sorted((float(score) for score in leaderboard), reverse=not lower_is_better)  # best first
    out = {name: ranked[place - 1] for name, place in medal_places(len(ranked)).items()}
    middle = len(ranked) // 2
    out["median"] = ranked[middle] if len(ranked) % 2 else (ranked[middle - 1] + ranked[middle]) / 2
    return out


def task_thresholds(references: References | None, lower_is_better: bool) -> tuple[dict, str | None]:
    """The thresholds a task grades with and where they come from ("declared", "leaderboard" or
    None): a declared `thresholds` block wins whole over the ones a leaderboard gives."""
    block = references.thresholds if references is not None else None
    declared = {} if block is None else {name: float(getattr(block, name)) for name in (*MEDALS, "median")
                                         if getattr(block, name) is not None}
    if any(name in declared for name in MEDALS):
        return declared, "declared"
    scores = leaderboard_scores(references)
    if scores:
        return leaderboard_thresholds(scores, lower_is_better), "leaderboard"
    return {}, None


def leaderboard_scores(references: References | None) -> list[float]:
    """The leaderboard's scores a compiled task embeds (`references.leaderboard.scores`), or []."""
    board = references.leaderboard if references is not None else None
    if board is None:
        return []
    return [float(s) for s in board.scores if math.isfinite(s)]


def medal_frame(frame: pd.DataFrame, references: dict) -> pd.DataFrame:
    """The evaluation rows of tasks with thresholds (`references[task]["thresholds"]`), each with
    its `medal` ("" for none), `any_medal` (1.0/0.0; NaN for a run ended by a task error) and
    `percentile` in the task's leaderboard (NaN without one; 0 for a run without a valid score)."""
    rows = frame[frame["task"].map(lambda task: bool((references.get(task) or {}).get("thresholds")))].copy()
    medals, any_medal, placed = [], [], []
    for task, score, direction, failed in zip(rows["task"], rows["final_score"], rows["direction"],
                                              rows.get("task_error", pd.Series(False, index=rows.index))):
        score = None if score is None or (isinstance(score, float) and math.isnan(score)) else float(score)
        lower = direction == "lower_is_better"
        won = medal(score, references[task]["thresholds"], lower)
        medals.append(won or "")
        any_medal.append(float("nan") if failed else float(won is not None))
        board = references[task].get("leaderboard")
        # a run without a valid submission beats no entry: 0, as it earns no medal
        value = percentile(score, board, lower) if board else None
        placed.append(float("nan") if failed or not board else 0.0 if value is None else value)
    rows["medal"] = medals
    rows["any_medal"] = any_medal
    rows["percentile"] = placed
    return rows


def _percentile_figures(group: pd.DataFrame, seed: int) -> dict:
    values = group["percentile"].dropna()
    if values.empty:
        return {"percentile": float("nan"), "percentile_low": float("nan"), "percentile_high": float("nan")}
    low, high = bootstrap_ci(values, seed)
    return {"percentile": float(values.mean()), "percentile_low": low, "percentile_high": high}


def per_task(rows: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per task × agent × model: runs, each medal's count, and the any-medal rate with its interval."""
    out = []
    for key, group in rows.groupby(TASK_GROUP, sort=True):
        low, high = bootstrap_ci(group["any_medal"], seed)
        out.append({**dict(zip(TASK_GROUP, key)), "runs": len(group),
                    **{name: int((group["medal"] == name).sum()) for name in MEDALS},
                    "any_medal": float(group["any_medal"].mean()), "any_medal_low": low, "any_medal_high": high,
                    **_percentile_figures(group, seed)})
    return pd.DataFrame(out, columns=[*TASK_GROUP, "runs", *MEDALS, "any_medal", "any_medal_low", "any_medal_high",
                                      *PERCENTILE])


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
                    "any_medal_low": low, "any_medal_high": high, **_pooled_percentile(group, seed)})
    return pd.DataFrame(out, columns=[*GROUP, "tasks", "runs", *MEDALS, "any_medal", "any_medal_low", "any_medal_high",
                                      *PERCENTILE])


def _pooled_percentile(group: pd.DataFrame, seed: int) -> dict:
    """The percentile averaged over the tasks that have a leaderboard (each task weighs the same)."""
    tasks = [g["percentile"].dropna().to_numpy() for _, g in group.groupby("task", sort=True)]
    tasks = [t for t in tasks if t.size]
    if not tasks:
        return {"percentile": float("nan"), "percentile_low": float("nan"), "percentile_high": float("nan")}
    low, high = stratified_bootstrap_ci(tasks, seed)
    return {"percentile": float(sum(t.mean() for t in tasks) / len(tasks)), "percentile_low": low,
            "percentile_high": high}
