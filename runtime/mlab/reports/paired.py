"""Paired comparison of two agent × model pairs on the seeds they share.

Two methods run on the same task with the same seed see the same data split and the same
starting workspace, so the difference of their figures on that (task, seed) removes what the
seed alone explains. For every two methods (within a data variant) with shared (task, seed)
pairs, the table gives the mean difference first minus second of a figure (by default the
normalised score; any figure where more is better), its 95% bootstrap interval over the pairs, the pairs won by each side, and
the number of pairs. An interval that excludes 0 is a difference the seeds do not explain.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from mlab.reports.stats import bootstrap_ci


def paired_table(frame: pd.DataFrame, column: str = "normalised", seed: int = 0) -> pd.DataFrame:
    """Differences of `column` between every two agent × model pairs on shared (task, seed)."""
    out = []
    data = frame[frame[column].notna()]
    for variant, rows in data.groupby("data_variant", sort=True):
        values = rows.groupby(["agent", "model", "task", "seed"], sort=True)[column].mean()
        methods = sorted({(a, m) for a, m, _, _ in values.index})
        for first, second in combinations(methods, 2):
            left, right = values.loc[first], values.loc[second]
            shared = left.index.intersection(right.index)
            if not len(shared):
                continue
            diff = left.loc[shared].to_numpy(dtype=float) - right.loc[shared].to_numpy(dtype=float)
            low, high = bootstrap_ci(diff, seed)
            out.append({"data_variant": variant, "first": " / ".join(first), "second": " / ".join(second),
                        "figure": column, "pairs": len(diff), "difference": float(np.mean(diff)),
                        "difference_low": low, "difference_high": high,
                        "first_wins": int((diff > 0).sum()), "second_wins": int((diff < 0).sum())})
    return pd.DataFrame(out, columns=["data_variant", "first", "second", "figure", "pairs", "difference",
                                      "difference_low", "difference_high", "first_wins", "second_wins"])
