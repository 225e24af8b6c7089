"""Figures that rank or pair agents compare the same work: two agents that ran overlapping task
sets are averaged, ranked (AUP), placed on the frontier and paired over the task they both ran,
the report names what it left out, and a task an agent never ran is "no runs", never a failure
nor "no valid submission". Every figure below is worked by hand from the runs in RUNS."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest

from test_report_golden import TEMPLATE

# agent, task, seed, success, improvement, final score (mae, lower is better); None: no submission
RUNS = [
    ("research", "t1", 0, True, 0.5, 2.6), ("research", "t1", 1, True, 0.3, 3.6),
    ("research", "t2", 0, True, 0.2, 4.0), ("research", "t2", 1, False, None, None),
    ("research-b", "t2", 0, True, 0.15, 5.2), ("research-b", "t2", 1, True, 0.3, 3.6),
    ("research-b", "t3", 0, False, None, None), ("research-b", "t3", 1, False, None, None),
]


def make_runs(into: Path) -> Path:
    for number, (agent, task, seed, success, gain, score) in enumerate(RUNS):
        run_id = f"20261202T065819-{number:06x}"
        target = into / run_id
        shutil.copytree(TEMPLATE, target)
        (target / "scores.jsonl").unlink(missing_ok=True)
        shutil.move(target / "build" / "tasks" / "tiny", target / "build" / "tasks" / task)
        if agent != "research":
            shutil.copytree(target / "build" / "agents" / "research", target / "build" / "agents" / agent)
        meta = json.loads((target / "run.json").read_text())
        (target / "run.json").write_text(json.dumps({**meta, "id": run_id, "seed": seed, "task": task,
                                                     "agent": agent}))
        result = json.loads((target / "result.json").read_text())
        (target / "result.json").write_text(json.dumps({
            **result, "run_id": run_id, "seed": seed, "task": task, "agent": agent, "success": success,
            "improvement": gain, "score": score, "submitted": score is not None,
            "failure_mode": None if success else "submission format error"}))
    return into


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from matplotlib.container import BarContainer
    from matplotlib.figure import Figure

    from mlab.reports.compare import Comparison
    from mlab.reports.render import write_report

    root = tmp_path_factory.mktemp("shared")
    runs = make_runs(root / "runs")
    drawn = {}
    save = Figure.savefig

    def recording(figure, path, *args, **kwargs):
        drawn[Path(path).stem] = [{"ticks": [t.get_text() for t in axis.get_xticklabels()],
                                   "bars": [(c.get_label(), [b.get_height() for b in c.patches])
                                            for c in axis.containers if isinstance(c, BarContainer)],
                                   "texts": [(t.get_position()[0], t.get_text()) for t in axis.texts]}
                                  for axis in figure.axes]
        return save(figure, path, *args, **kwargs)

    with mock.patch.object(Figure, "savefig", recording):
        write_report(runs, root / "report", Comparison("agent", "research", "research-b"))
    return root / "report", drawn


def _row(frame: pd.DataFrame, agent: str) -> pd.Series:
    (index,) = frame.index[frame["agent"] == agent]
    return frame.loc[index]


def test_averages_over_tasks_are_over_the_task_both_ran(report):
    over = pd.read_csv(report[0] / "over_tasks.csv")
    # t2 only: research 1 success in 2 runs, improvement 0.2 (its one valid submission);
    # research-b 2 of 2, improvements 0.15 and 0.3
    a, b = _row(over, "research"), _row(over, "research-b")
    assert (a["tasks"], a["runs"], a["success_rate"], a["avg_improvement"]) == (1, 2, 0.5, pytest.approx(0.2))
    assert (b["tasks"], b["runs"], b["success_rate"], b["avg_improvement"]) == (1, 2, 1.0, pytest.approx(0.225))


def test_the_report_names_what_it_left_out(report):
    text = (report[0] / "report.md").read_text()
    assert ("computed on the 1 task(s) every agent · model ran (t2); left out, as not run by all: t1 (run only by "
            "research · mlab/scripted); t3 (run only by research-b · "
            "mlab/scripted).") in text
    # the paired comparison: t2's two seeds pair; what had no partner is named
    assert "2 pairs" in text and "left out: 2 of research (t1 seeds 0, 1), 2 of research-b (t3 seeds 0, 1)" in text


def test_aup_ranks_on_the_shared_task_only(report):
    aup = pd.read_csv(report[0] / "aup.csv")
    # t2, lower is better: research's mean valid score 4.0 (best, ratio 1), research-b's (5.2 + 3.6) / 2 = 4.4
    # (ratio 1.1); τ_max = 1.01 × 1.1 = 1.111; AUP = τ_max − ratio
    assert _row(aup, "research")["aup"] == pytest.approx(0.111)
    assert _row(aup, "research-b")["aup"] == pytest.approx(0.011)
    assert set(aup["tasks"]) == {1}


def test_the_frontier_and_paired_figures_are_over_the_shared_task(report):
    frontier = pd.read_csv(report[0] / "cost_frontier.csv")
    assert _row(frontier, "research")["success_rate"] == 0.5 and _row(frontier, "research-b")["success_rate"] == 1.0
    assert set(frontier["tasks"]) == {1}
    compared = pd.read_csv(report[0] / "comparison.csv")
    overall = compared[compared["task"] == "all tasks"].iloc[0]
    # seed 0: 1 − 1, seed 1: 0 − 1; improvement only where both submitted (seed 0): 0.2 − 0.15
    assert overall["success_difference"] == pytest.approx(-0.5)
    assert overall["improvement_difference"] == pytest.approx(0.05)


def test_a_task_never_run_is_no_runs_not_no_valid_submission(report):
    (axis,) = report[1]["improvement_bars"]
    assert axis["ticks"] == ["t1", "t2", "t3", "all tasks"]
    bars = dict(axis["bars"])
    assert bars["research · mlab/scripted"] == pytest.approx([50 * 0.8, 20, 0, 20])
    assert bars["research-b · mlab/scripted"] == pytest.approx([0, 22.5, 0, 22.5])
    labels = sorted((round(x), text) for x, text in axis["texts"] if text in ("no runs", "no valid submission"))
    # research (left bar of each pair) never ran t3; research-b (right) never ran t1, ran t3 without a submission
    assert labels == [(0, "no runs"), (2, "no runs"), (2, "no valid submission")]
