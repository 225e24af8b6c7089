"""What the report may pool: runs of one task on one version and one prepared data, and what it
says beside the scores (the compute a run used, the hardware class, the task's known issues).

`task_labels` refuses (a UsageError naming both sides) to report runs of one task and data variant
that were made on different task versions, or on the same version with different prepared data
(a preparation key), as one success rate; with `by_version` it labels each such group apart
("house-price v2"), so they are reported side by side. Data variants are never pooled anyway:
every table is split by variant (docs/comparability.md).
"""
from __future__ import annotations

from collections import Counter

import pandas as pd

from mlab.errors import UsageError
from mlab.reports.tables import Table, percent, text


def _version(run) -> int:
    return int(run.meta.get("task_version") or (run.result or {}).get("task_version") or 1)


def _key(run) -> str:
    return str(run.meta["data"].get("key") or "")


def task_labels(runs: list, by_version: bool = False) -> dict[str, str]:
    """Run id → the task name the report groups the run under."""
    groups: dict[tuple[str, str], list] = {}
    for run in runs:
        groups.setdefault((run.task, run.variant), []).append(run)
    labels = {}
    for (task, variant), members in sorted(groups.items()):
        versions = Counter(_version(r) for r in members)
        keys = Counter((_version(r), _key(r)) for r in members)
        if len(versions) > 1 and not by_version:
            shown = " and ".join(f"version {v} ({n} run{'s' if n != 1 else ''})" for v, n in sorted(versions.items()))
            raise UsageError(f"runs of task {task} on data {variant} were made on {shown}: one success rate "
                             "cannot pool them; give --by-version to report the versions side by side, or "
                             "report folders that hold one version each")
        if len(keys) > len(versions) and not by_version:
            version = next(v for v in versions if sum(k[0] == v for k in keys) > 1)
            shown = " and ".join(f"{key[:12]} ({n} run{'s' if n != 1 else ''})"
                                 for (v, key), n in sorted(keys.items()) if v == version)
            raise UsageError(f"runs of task {task} version {version} on data {variant} used different prepared "
                             f"data (preparation keys {shown}): the data changed without a version bump, so "
                             "one success rate cannot pool them; give --by-version to report them side by side")
        for run in members:
            label = task
            if by_version and (len(versions) > 1 or len(keys) > len(versions)):
                label = f"{task} v{_version(run)}"
                if sum(k[0] == _version(run) for k in keys) > 1:
                    label += f" data {_key(run)[:8]}"
            labels[run.id] = label
    return labels


def compute_table(frame: pd.DataFrame) -> Table:
    """Score beside compute, per task × agent × model: success rate, CPU-hours and accelerator-hours
    per run, and the hardware classes the runs ran on."""
    out = []
    for key, group in frame.groupby(["data_variant", "task", "agent", "model"], sort=True):
        accelerator = pd.to_numeric(group["compute_accelerator_s"], errors="coerce")
        out.append({"data_variant": key[0], "task": key[1], "agent": key[2], "model": key[3], "runs": len(group),
                    "success_rate": group["success_value"].mean(),
                    "cpu_hours": (group["compute_cpu_s"].astype(float) / 3600).mean(),
                    "accelerator_hours": (accelerator / 3600).mean() if accelerator.notna().any() else None,
                    "hardware": "; ".join(sorted(set(group["hardware_class"])))})
    table = pd.DataFrame(out, columns=["data_variant", "task", "agent", "model", "runs", "success_rate",
                                       "cpu_hours", "accelerator_hours", "hardware"])
    return Table("compute", "Score beside compute per run", table, [
        ("variant", text("data_variant")), ("task", text("task")), ("agent", text("agent")),
        ("model", text("model")), ("runs", text("runs")), ("success rate", lambda r: percent(r["success_rate"])),
        ("CPU-hours per run", lambda r: f"{r['cpu_hours']:.4f}"),
        ("accelerator-hours per run", lambda r: "not measured" if r["accelerator_hours"] is None
         or pd.isna(r["accelerator_hours"]) else f"{r['accelerator_hours']:.4f}"),
        ("hardware", text("hardware"))],
        "CPU-hours are the agent's scripts' CPU time (kernel-measured); accelerator busy time is recorded where "
        "a vendor tool measures it, else \"not measured\". Hardware: the accelerators and CPU cores the "
        "scripts were allowed (run.json's hardware record; \"unknown\" for runs made before it).")


def hardware_footnote(frame: pd.DataFrame, factor: str, first: str, second: str) -> str | None:
    """A footnote when the two sides of a comparison ran on different hardware classes."""
    sides = {value: sorted(set(frame.loc[frame[factor] == value, "hardware_class"])) for value in (first, second)}
    if sides[first] == sides[second]:
        return None
    return (f"† Not like for like: {factor} {first} ran on {', '.join(sides[first]) or 'nothing'} and {factor} "
            f"{second} on {', '.join(sides[second]) or 'nothing'}; the differences mix the hardware with the "
            f"{factor}s (docs/comparability.md).")


def known_issues(runs: list) -> list[str]:
    """Report lines for the declared known issues of the reported tasks, as of each run's version."""
    from mlab.reports.runs import task_document

    lines, seen = [], set()
    for run in runs:
        task = task_document(run)
        version = _version(run)
        for issue in task.issues if task is not None else ():
            key = (run.task, version, issue.text)
            if key in seen or issue.since > version:
                continue
            seen.add(key)
            fixed = issue.fixed
            state = f"fixed in version {fixed}" if fixed and fixed <= version else "open"
            lines.append(f"- {run.task} (version {version}): {issue.text} (since version {issue.since}, {state})")
    return sorted(lines)


def probe_lines(runs_dir) -> list[str]:
    """Report lines for the `mlab probe -o` results saved under RUNS_DIR/probes/, beside the scores:
    how familiar each model was with each task (docs/comparability.md#contamination)."""
    from pathlib import Path

    from mlab.bounded_json import read_json
    from mlab.errors import MlabError
    from mlab.text import printable

    def cell(text: str) -> str:  # printable, and no '|' to break the table's row
        return printable(text).replace("|", "\\|")

    lines = []
    for path in sorted((Path(runs_dir) / "probes").glob("*.json")):
        try:
            doc = read_json(path, schema="probe")   # a runs folder from elsewhere: bounded, checked, never a pipe
            interval = doc.get("interval")
            span = f" [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else ""
            familiarity = "n/a" if doc.get("familiarity") is None else f"{doc['familiarity']:+.3f}"
            canary = "n/a" if doc.get("canary") is None else f"{doc['canary']:.2f}"
            task, model, said = (cell(doc.get(key, "")) for key in ("task", "model", "verdict"))
            lines.append(f"| {task} | {doc.get('task_version', 1)} | {model} | {familiarity}{span} | {canary} | {said} |")
        except (OSError, ValueError, KeyError, TypeError, IndexError, MlabError):
            lines.append(f"| {printable(path.name)} | | | not a probe result | | |")
    if not lines:
        return []
    return ["## Familiarity probes", "", "| task | version | model | familiarity [95% CI] | canary | verdict |",
            "|---|---|---|---|---|---|", *lines, "",
            "From `mlab probe TASK --model M -o RUNS_DIR/probes/NAME.json`: prefixes of the task's texts "
            "continued, minus shuffled controls; the canary is the share of the task's canary GUID the model "
            "gave.", ""]
