"""Tree-search runs in a report: the best validation score so far against nodes made, the chosen
node, and the tree's size per agent × model.

A run is a tree search when its trace has node records (or its result.json a `search` block).
Its curve has one point per node in creation order: the best validation score of the valid nodes
made so far (a buggy node or one without a score adds nothing; before the first valid node there
is no value). Validation scores are the agent's own, on the task's metric and in its direction,
so curves are drawn per task, never averaged across tasks. The chosen node is the one whose
workspace was scored (result.json search.submitted_node): its validation score, and the final
test score the task's evaluator gave it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from mlab.reports.runs import LoadedRun
from mlab.reports.taxonomy import is_valid_node

CURVE_COLUMNS = ["run_id", "data_variant", "task", "agent", "model", "seed", "direction", "node", "operator",
                 "validation", "buggy", "best_validation", "submitted", "test_score"]


def is_tree_run(run: LoadedRun) -> bool:
    return isinstance((run.result or {}).get("search"), dict) or bool(run.nodes)


def best_so_far(nodes: list[dict], lower_is_better: bool) -> list[float | None]:
    """The best validation score among the valid nodes made up to each node (None before any)."""
    best, out = None, []
    for record in nodes:
        if is_valid_node(record):
            value = float(record["validation"])
            if best is None or (value < best if lower_is_better else value > best):
                best = value
        out.append(best)
    return out


def curve_rows(runs: list[LoadedRun]) -> pd.DataFrame:
    """One row per node of every finished tree-search run: the node and the best score so far."""
    rows = []
    for run in runs:
        if not run.finished or not is_tree_run(run):
            continue
        result = run.result or {}
        lower = result.get("direction") == "lower_is_better"
        submitted = (result.get("search") or {}).get("submitted_node")
        nodes = sorted(run.nodes, key=lambda r: r["node"])
        for record, best in zip(nodes, best_so_far(nodes, lower)):
            rows.append({"run_id": run.id, "data_variant": run.variant, "task": run.task, "agent": run.agent,
                         "model": run.model, "seed": run.seed, "direction": result.get("direction"),
                         "node": record["node"], "operator": record.get("operator"),
                         "validation": record.get("validation"), "buggy": bool(record.get("buggy")),
                         "best_validation": best, "submitted": record["node"] == submitted,
                         "test_score": result.get("score") if record["node"] == submitted else None})
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def search_summary(runs: list[LoadedRun]) -> pd.DataFrame:
    """Per data variant × task × agent × model of tree runs: nodes made, valid and buggy shares, the
    best validation reached, the chosen node's validation and test score, and how often the chosen
    node was the best by validation."""
    rows = []
    for run in runs:
        if not run.finished or not is_tree_run(run):
            continue
        result = run.result or {}
        search = result.get("search") or {}
        nodes = run.nodes
        valid = [r for r in nodes if is_valid_node(r)]
        lower = result.get("direction") == "lower_is_better"
        best = best_so_far(nodes, lower)[-1] if nodes else None
        rows.append({"data_variant": run.variant, "task": run.task, "agent": run.agent, "model": run.model,
                     "policy": search.get("policy"), "nodes": len(nodes), "valid": len(valid),
                     "buggy": sum(1 for r in nodes if r.get("buggy")), "best_validation": best,
                     "chosen_validation": search.get("submitted_validation"),
                     "chosen_is_best": None if best is None or search.get("submitted_validation") is None
                     else float(search["submitted_validation"] == best),
                     "chosen_score": result.get("score"), "selected_by": search.get("selected_by")})
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    out = []
    keys = ["data_variant", "task", "agent", "model"]
    for key, group in frame.groupby(keys, sort=True):
        made = group["nodes"].sum()
        out.append({**dict(zip(keys, key)), "policy": ", ".join(sorted(set(group["policy"].dropna()))),
                    "runs": len(group), "nodes_per_run": group["nodes"].mean(),
                    "valid_share": group["valid"].sum() / made if made else np.nan,
                    "buggy_share": group["buggy"].sum() / made if made else np.nan,
                    "best_validation": pd.to_numeric(group["best_validation"]).median(),
                    "chosen_validation": pd.to_numeric(group["chosen_validation"]).median(),
                    "chosen_score": pd.to_numeric(group["chosen_score"]).median(),
                    "chosen_is_best": pd.to_numeric(group["chosen_is_best"]).mean(),
                    "selected_by": ", ".join(sorted(set(group["selected_by"].dropna())))})
    return pd.DataFrame(out)


def reply_formats(runs: list[LoadedRun]) -> pd.DataFrame:
    """Runs whose reply format that ran is not the declared one (a tool agent's fallback), counted
    per data variant × agent × model × declared → ran, with the reasons given."""
    rows, totals = [], {}
    for run in runs:
        group = (run.variant, run.agent, run.model)
        totals[group] = totals.get(group, 0) + 1
        form = (run.result or {}).get("reply_format")
        if not isinstance(form, dict) or form.get("ran") == form.get("declared"):
            continue
        rows.append({"data_variant": run.variant, "agent": run.agent, "model": run.model,
                     "declared": form.get("declared"), "ran": form.get("ran"),
                     "reason": form.get("reason") or "not given"})
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    keys = ["data_variant", "agent", "model", "declared", "ran"]
    return pd.DataFrame([{**dict(zip(keys, key)), "runs": len(group), "of_runs": totals[key[:3]],
                          "reasons": "; ".join(sorted(set(group["reason"])))}
                         for key, group in frame.groupby(keys, sort=True)])
