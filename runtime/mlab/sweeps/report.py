"""The sweep's report: its run table (runs.md), then `mlab report` over its finished runs.

runs.md lists every run of the experiment with how it stands (done, failed, waiting), its run
folder and, when finished, its score, improvement, steps, tokens and cost; then success counts
per task, agent and models. The statistics across runs (confidence intervals, failure modes)
are `mlab report`'s (runtime/mlab/reports); the sweep writes it from runs/ into report/.
"""
from __future__ import annotations

import json

from mlab.sweeps.plan import RunSpec
from mlab.sweeps.state import DONE, SweepFolder

RUN_TABLE = "runs.md"


def _result(folder: SweepFolder, name: str | None) -> dict | None:
    if not name:
        return None
    try:
        return json.loads((folder.run_dir(name) / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _cell(value, form: str = "{}") -> str:
    return "" if value is None else form.format(value)


def run_table(name: str, specs: list[RunSpec], state: dict, folder: SweepFolder, stopped_for: str | None = None) -> str:
    """The Markdown run table of a sweep (with why it stopped early, when it did)."""
    lines = [f"# Sweep {name}", "", *([f"**{stopped_for[0].upper()}{stopped_for[1:]}.**", ""] if stopped_for else []),
             "| task | agent | models | seed | status | attempts | run | score | improvement | success "
             "| steps | tokens | cost | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for spec in specs:
        entry = state["runs"].get(spec.key, {})
        result = _result(folder, entry.get("run")) if entry.get("status") == DONE else None
        groups.setdefault((spec.task, spec.agent, spec.models_text()), []).append(result or {})
        r = result or {}
        status = entry.get("status", "pending") + (f" ({entry['error']})" if entry.get("error") else "")
        lines.append("| " + " | ".join([
            spec.task, spec.agent, spec.models_text(), str(spec.seed), status.replace("|", "/"),
            str(entry.get("attempts", 0)), _cell(entry.get("run")), _cell(r.get("score"), "{:.6g}"),
            _cell(r.get("improvement"), "{:+.1%}"), _cell(r.get("success")), _cell(r.get("steps")),
            _cell(r.get("total_tokens"), "{:,}"),
            _cell(r.get("cost"), "${:.4f}") if r.get("cost") is not None or not r else "unknown price",
            _cell(r.get("wall_time_s"), "{:.1f}")]) + " |")
    lines += ["", "| task | agent | models | finished | successes | mean improvement |", "|---|---|---|---|---|---|"]
    for (task, agent, models), results in groups.items():
        finished = [r for r in results if r]
        gains = [r["improvement"] for r in finished if r.get("improvement") is not None]
        mean = f"{sum(gains) / len(gains):+.1%}" if gains else ""
        lines.append(f"| {task} | {agent} | {models} | {len(finished)}/{len(results)} | "
                     f"{sum(bool(r.get('success')) for r in finished)} | {mean} |")
    return "\n".join(lines) + "\n"


def report_sweep(name: str, specs: list[RunSpec], state: dict, folder: SweepFolder,
                 with_report: bool = True, stopped_for: str | None = None) -> list[str]:
    """Write runs.md and `mlab report`'s report of the finished runs; returns what to tell the user."""
    from mlab.errors import MlabError
    from mlab.reports.render import write_report

    table = folder.root / RUN_TABLE
    table.write_text(run_table(name, specs, state, folder, stopped_for), encoding="utf-8")
    notes = [f"run table: {table}"]
    if not with_report:
        return notes
    if not any(folder.finished(e.get("run")) for e in state["runs"].values()):
        return notes + ["no run has finished yet: no report"]
    try:
        report = write_report(folder.runs, folder.report)
    except MlabError as problem:
        return notes + [f"the report could not be written: {problem}"]
    return notes + [f"report: {report.folder / 'report.md'}"] + [f"note: {n}" for n in report.notes]
