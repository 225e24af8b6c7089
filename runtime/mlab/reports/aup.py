"""AUP: the area under each method's performance profile over tasks (MLGym's summary).

MLGym (Nathani et al. 2025, "MLGym: A New Framework and Benchmark for Advancing AI Research
Agents") ranks methods across tasks with the area under performance profiles (Dolan & Moré
2002, "Benchmarking optimization software with performance profiles"). A method here is an
agent × model pair (within one data variant). On task p, method m's score ℓ is the mean of its
valid final scores over seeds, and its performance ratio is

    r(p, m) = best(p) / ℓ(p, m)  (higher is better)   or   ℓ(p, m) / best(p)  (lower is better),

with best(p) the best mean on p, so the best method has r = 1. A method with no valid score on
p fails it and gets r = τ_max, where τ_max = (1 + ε) · the largest finite ratio (ε = 0.01), so a
failure contributes nothing. The profile ρ_m(τ) is the share of tasks with r(p, m) ≤ τ, and

    AUP_m = ∫_1^τ_max ρ_m(τ) dτ = (1/|P|) Σ_p (τ_max − r(p, m)).

Ratios need positive scores: a task where some mean is not positive is left out (named in the
table's `tasks_left_out`). AUP compares the methods in one table with each other; adding a
method can change every value. The interval is a bootstrap over seeds: each draw resamples
the runs of every task × method and recomputes every AUP.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mlab.reports.stats import GROUP, LEVEL, RESAMPLES

EPSILON = 0.01


def ratios(means: np.ndarray, lower_is_better: np.ndarray) -> np.ndarray:
    """Performance ratios of a tasks × methods array of mean scores (NaN: failed; stays NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        best = np.where(lower_is_better, np.nanmin(means, axis=1), np.nanmax(means, axis=1))[:, None]
        return np.where(lower_is_better[:, None], means / best, best / means)


def aup(means: np.ndarray, lower_is_better: np.ndarray) -> np.ndarray:
    """AUP of each method (column) of a tasks × methods array of mean scores (NaN: failed)."""
    r = ratios(means, lower_is_better)
    finite = r[np.isfinite(r)]
    tau_max = (1 + EPSILON) * (finite.max() if finite.size else 1.0)
    r = np.where(np.isfinite(r), r, tau_max)
    return (tau_max - r).mean(axis=0)


def profile(means: np.ndarray, lower_is_better: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """ρ_m(τ) at each of `taus`, methods × taus (for the report's profile plot)."""
    r = ratios(means, lower_is_better)
    r = np.where(np.isfinite(r), r, np.inf)
    return (r[:, :, None] <= taus[None, None, :]).mean(axis=0)


def aup_table(frame: pd.DataFrame, seed: int = 0, resamples: int = RESAMPLES) -> pd.DataFrame:
    """Per data variant × agent × model: AUP over the tasks every method was run on, with interval."""
    out = []
    for variant, rows in frame.groupby("data_variant", sort=True):
        rows = rows[~rows.get("task_error", pd.Series(False, index=rows.index)).astype(bool)]
        methods = sorted({tuple(k) for k in rows[GROUP[1:]].itertuples(index=False)})
        tasks, left_out, lower, cells = [], [], [], []
        for task, group in rows.groupby("task", sort=True):
            by_method = [pd.to_numeric(group[(group["agent"] == a) & (group["model"] == m)]["final_score"],
                                       errors="coerce").dropna().to_numpy() for a, m in methods]
            means = [v.mean() if v.size else np.nan for v in by_method]
            if any(np.isfinite(x) and x <= 0 for x in means) or all(not v.size for v in by_method):
                left_out.append(task)
                continue
            tasks.append(task)
            lower.append((group["direction"] == "lower_is_better").any())
            cells.append(by_method)
        if not tasks:
            continue
        lower_arr = np.array(lower, dtype=bool)
        point = aup(np.array([[v.mean() if v.size else np.nan for v in row] for row in cells]), lower_arr)
        rng = np.random.default_rng(seed)
        draws = np.empty((resamples, len(methods)))
        for i in range(resamples):
            means = np.array([[v[rng.integers(0, v.size, v.size)].mean() if v.size else np.nan for v in row]
                              for row in cells])
            draws[i] = aup(means, lower_arr)
        low, high = np.percentile(draws, [50 * (1 - LEVEL), 100 - 50 * (1 - LEVEL)], axis=0)
        for index, (agent, model) in enumerate(methods):
            out.append({"data_variant": variant, "agent": agent, "model": model, "tasks": len(tasks),
                        "aup": float(point[index]), "aup_low": float(low[index]), "aup_high": float(high[index]),
                        "tasks_left_out": ", ".join(left_out)})
    return pd.DataFrame(out, columns=[*GROUP, "tasks", "aup", "aup_low", "aup_high", "tasks_left_out"])
