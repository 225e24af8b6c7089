"""A run ended as a task error (the task was found broken at run time) counts against no agent:
the success rates leave it out and the tables count it in their own column."""
from __future__ import annotations

import math

from mlab.reports.render import report_tables
from mlab.reports.stats import over_tasks, per_task, runs_frame
from mlab.reports.tables import to_markdown


def row(task: str, seed: int, success: bool, failure_mode: str | None = None) -> dict:
    out = {"run_id": f"{task}-{seed}", "task": task, "data_variant": "lite", "agent": "research",
           "model": "mlab/demo", "seed": seed, "demo": False, "success": success,
           "improvement": 0.2 if success else None, "valid_submission": success,
           "best_success": None, "cost": 0.0, "failure_mode": failure_mode,
           "failure_labels": failure_mode or ("" if success else "no submission"), "hallucinated_claims": 0,
           "total_tokens": 10, "wall_time_s": 1.0, "compute_wall_s": 0.0, "compute_cpu_s": 0.0}
    for tier in ("main", "fast", "edit"):
        out[f"prompt_tokens_{tier}"] = out[f"completion_tokens_{tier}"] = 0
    return out


RUNS = [row("a", 0, True), row("a", 1, False), row("a", 2, False, "task error"),
        row("b", 0, False, "task error")]


def test_task_error_runs_leave_the_success_rate_and_are_counted_apart():
    frame = runs_frame(RUNS)
    tasks = per_task(frame).set_index("task")
    assert tasks.loc["a", "runs"] == 3 and tasks.loc["a", "task_errors"] == 1
    assert tasks.loc["a", "success_rate"] == 0.5          # 1 of the 2 runs the agent could be judged on
    assert tasks.loc["b", "task_errors"] == 1 and math.isnan(tasks.loc["b", "success_rate"])
    overall = over_tasks(frame).iloc[0]
    assert overall["runs"] == 4 and overall["task_errors"] == 2
    assert overall["success_rate"] == 0.5                 # task b has no rate, so it is not a 0%


def test_the_report_tables_show_task_errors():
    tables, _ = report_tables(runs_frame(RUNS), 0, None)
    by_name = {table.name: to_markdown(table) for table in tables}
    assert "| task errors |" in by_name["per_task"] and "| task errors |" in by_name["over_tasks"]
    assert "| lite | a | research | mlab/demo | 3 | 1 | 50.0%" in by_name["per_task"]
    assert "| lite | research | mlab/demo | 2 | 4 | 2 | 50.0%" in by_name["over_tasks"]
