"""Scores put on a common scale between two reference points of a task, per task and pooled.

Two definitions from the field, both linear in the raw score and both independent of the
metric's direction (numerator and denominator change sign together):

- **Normalised score** (RE-Bench: Wijk et al. 2024, "RE-Bench: Evaluating frontier AI R&D
  capabilities of language model agents against human experts"): the task's starting solution
  scores 0 and its reference solution 1, `(score - start) / (reference - start)`. Above 1 beats
  the reference; below 0 is worse than where the agent started.
- **Share of the gap closed** (MLRC-Bench: Zhang et al. 2025, "MLRC-Bench: Can Language Agents
  Solve Machine Learning Research Challenges?", its "relative improvement to human"): the same
  ratio with the best human entry of the competition as the reference, given in percent,
  `100 * (score - baseline) / (best_human - baseline)`.

The starting point is the run's measured baseline (result.json `baseline.value`). A run with no
valid submission left the starting solution in place, so it scores as the starting point (0),
never dropped: leaving failures out would flatter an agent that fails often. Each figure has a
95% bootstrap interval over seeds (per task) and over seeds within tasks (pooled), the helpers
of `mlab.reports.stats`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mlab.reports.stats import GROUP, TASK_GROUP, bootstrap_ci, stratified_bootstrap_ci


def normalised_score(score: float | None, start: float | None, reference: float | None) -> float | None:
    """RE-Bench's normalised score: 0 at `start`, 1 at `reference`; None when it is undefined
    (no starting point, or a reference equal to it). A missing `score` counts as `start` (0)."""
    if start is None or reference is None or not math.isfinite(start) or not math.isfinite(reference):
        return None
    if reference == start:
        return None
    if score is None or not math.isfinite(score):
        return 0.0
    return (score - start) / (reference - start)


def gap_closed(score: float | None, baseline: float | None, best_human: float | None) -> float | None:
    """MLRC-Bench's share (percent) of the baseline-to-best-human gap that `score` closed."""
    ratio = normalised_score(score, baseline, best_human)
    return None if ratio is None else 100.0 * ratio


def _reference(references: dict, task: str, key: str) -> float | None:
    value = (references.get(task) or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def normalised_frame(frame: pd.DataFrame, references: dict, key: str = "reference") -> pd.DataFrame:
    """`frame` (the evaluation rows) with `normalised` and `gap_closed` columns, for tasks whose
    reference points (`references[task][key]`: the reference solution's score; `best_human`: the
    best human entry, falling back on `key`) are known."""
    out = frame.copy()
    normal, gap = [], []
    for task, score, start, failed in zip(out["task"], out["final_score"], out["baseline"],
                                         out.get("task_error", pd.Series(False, index=out.index))):
        score = None if score is None or (isinstance(score, float) and math.isnan(score)) else float(score)
        start = None if start is None or (isinstance(start, float) and math.isnan(start)) else float(start)
        if failed:  # the task broke at run time: not the agent's score to count
            normal.append(float("nan"))
            gap.append(float("nan"))
            continue
        value = normalised_score(score, start, _reference(references, task, key))
        human = _reference(references, task, "best_human")
        closed = gap_closed(score, start, human if human is not None else _reference(references, task, key))
        normal.append(float("nan") if value is None else value)
        gap.append(float("nan") if closed is None else closed)
    out["normalised"] = normal
    out["gap_closed"] = gap
    return out


COLUMNS = ["normalised", "gap_closed"]


def per_task(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Mean normalised score and share of the gap closed, with intervals, per task × agent × model."""
    rows = []
    scored = frame[frame["normalised"].notna()]
    for key, group in scored.groupby(TASK_GROUP, sort=True):
        row = {**dict(zip(TASK_GROUP, key)), "runs": len(group)}
        for column in COLUMNS:
            low, high = bootstrap_ci(group[column], seed)
            row.update({column: float(group[column].mean()), f"{column}_low": low, f"{column}_high": high})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*TASK_GROUP, "runs", *_interval_columns()])


def pooled(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """The same averaged over tasks (each task weighs the same), per agent × model."""
    rows = []
    scored = frame[frame["normalised"].notna()]
    for key, group in scored.groupby(GROUP, sort=True):
        tasks = [g for _, g in group.groupby("task", sort=True)]
        row = {**dict(zip(GROUP, key)), "tasks": len(tasks), "runs": len(group)}
        for column in COLUMNS:
            arrays = [g[column].to_numpy(dtype=float) for g in tasks]
            low, high = stratified_bootstrap_ci(arrays, seed)
            row.update({column: float(np.mean([a.mean() for a in arrays])), f"{column}_low": low,
                        f"{column}_high": high})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*GROUP, "tasks", "runs", *_interval_columns()])


def _interval_columns() -> list[str]:
    return [name for column in COLUMNS for name in (column, f"{column}_low", f"{column}_high")]
