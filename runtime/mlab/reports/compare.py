"""Paired comparison of two agents or two models on the same tasks and seeds.

Runs are paired when they share the data variant, the task, the seed and the other factor
(the model when agents are compared, the agent when models are): the two sides then saw the
same problem with the same replicate number. Several runs on one side of a pair (repeated
runs) are averaged. The difference is A − B, per task and over all pairs, each with a 95%
bootstrap interval over pairs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlab.errors import UsageError
from mlab.reports.runs import DEMO_SUFFIX
from mlab.reports.stats import bootstrap_ci

FACTORS = ("agent", "model")
MEASURES = {"success_value": "success", "improvement_valid": "improvement", "total_tokens": "tokens",
            "cost": "cost"}


@dataclass(frozen=True)
class Comparison:
    factor: str
    first: str
    second: str

    @property
    def title(self) -> str:
        return f"{self.factor} {self.first} − {self.factor} {self.second}"


def parse_compare(text: str) -> list[Comparison]:
    """'agent:research,agent:react' or 'model:A,model:B' (model names may hold ':'): one pair.
    With more sides, 'agent:A,agent:B,agent:C,...', the first is the reference and each other
    side is compared with it (A against B, A against C, ...), as an experiment of several agents
    on the same tasks and seeds (linear-vs-tree) is read."""
    usage = ("--compare takes FACTOR:A,FACTOR:B[,FACTOR:C...] with FACTOR agent or model, "
             "e.g. agent:research,agent:react or model:openai/gpt-4o,model:mlab/demo")
    sides = text.split(",")
    if len(sides) < 2:
        raise UsageError(f"{usage}; got {text!r}")
    parsed = []
    for side in sides:
        factor, sep, value = side.strip().partition(":")
        if not sep or factor not in FACTORS or not value:
            raise UsageError(f"{usage}; got {side.strip()!r}")
        parsed.append((factor, value))
    if len({factor for factor, _ in parsed}) > 1:
        raise UsageError(f"compare like with like: every side must be an agent or every side a model; got {text!r}")
    values = [value for _, value in parsed]
    repeated = sorted({value for value in values if values.count(value) > 1})
    if repeated:
        raise UsageError(f"--compare needs different {parsed[0][0]}s; got {repeated[0]!r} more than once")
    return [Comparison(parsed[0][0], values[0], other) for other in values[1:]]


def _matches(column: pd.Series, value: str) -> pd.Series:
    """A model may be named with or without its demonstration label."""
    return (column == value) | (column.str.removesuffix(DEMO_SUFFIX) == value)


def _unpaired(mine: pd.DataFrame, theirs: pd.DataFrame) -> list[str]:
    """The tasks (with their seeds) of one side that the other side has no partner for: 'c seeds 0, 1'."""
    left = mine.index.difference(theirs.index)
    seeds: dict[str, list[str]] = {}
    for variant, task, seed, _ in left:
        seeds.setdefault(task, []).append(str(seed))
    return [f"{task} seed{'s' if len(s) > 1 else ''} {', '.join(sorted(set(s), key=int))}" for task, s in sorted(seeds.items())]


def compare(frame: pd.DataFrame, comparison: Comparison, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """The paired differences per task and over all tasks, and counts for the report's text."""
    column = comparison.factor
    available = sorted(frame[column].unique())
    sides = []
    for value in (comparison.first, comparison.second):
        chosen = frame[_matches(frame[column], value)]
        if chosen.empty:
            raise UsageError(f"no runs with {column} {value!r}; the runs have {column}s: {', '.join(available)}")
        sides.append(chosen)
    other = "model" if column == "agent" else "agent"
    key = ["data_variant", "task", "seed", other]
    means = [side.groupby(key, sort=True)[list(MEASURES)].mean() for side in sides]
    paired = means[0].merge(means[1], left_index=True, right_index=True, suffixes=("_a", "_b")).reset_index()
    info = {"pairs": len(paired), "runs_a": len(sides[0]), "runs_b": len(sides[1]),
            "unpaired_a": int(len(means[0]) - len(paired)), "unpaired_b": int(len(means[1]) - len(paired)),
            "unpaired_a_named": _unpaired(means[0], means[1]), "unpaired_b_named": _unpaired(means[1], means[0])}
    rows = []
    scopes = [((variant, task), group) for (variant, task), group in paired.groupby(["data_variant", "task"])]
    scopes += [((variant, "all tasks"), group) for variant, group in paired.groupby("data_variant")]
    for (variant, task), group in scopes:
        row = {"data_variant": variant, "task": task, "pairs": len(group)}
        for measure, name in MEASURES.items():
            a, b = group[f"{measure}_a"].to_numpy(float), group[f"{measure}_b"].to_numpy(float)
            both = ~(np.isnan(a) | np.isnan(b))
            difference = a[both] - b[both]
            low, high = bootstrap_ci(difference, seed)
            row.update({f"{name}_a": a[both].mean() if both.any() else np.nan,
                        f"{name}_b": b[both].mean() if both.any() else np.nan,
                        f"{name}_difference": difference.mean() if difference.size else np.nan,
                        f"{name}_difference_low": low, f"{name}_difference_high": high,
                        f"{name}_pairs": int(both.sum())})
        rows.append(row)
    columns = ["data_variant", "task", "pairs"] + [
        f"{name}_{part}" for name in MEASURES.values()
        for part in ("a", "b", "difference", "difference_low", "difference_high", "pairs")]
    return pd.DataFrame(rows, columns=columns), info  # the columns even when nothing pairs
