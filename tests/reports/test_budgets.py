"""Score at a budget (`mlab eval --at`, the report's budget table and plot), checked against values
worked out by hand from runs whose snapshots, times, tokens and costs are known (budget_runs.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from budget_runs import BASELINE, INVALID, linear_run, tree_run
from report_helpers import mlab

# (elapsed_s at the step's end, tokens, cost, MAE of its submission): cumulative tokens 1000,
# 5000, 20000, 30000 and cost 0.01, 0.05, 0.20, 0.30; the run ends at 9000.5 s with a 3 h limit
STEPS = [(600.0, 1000, 0.01, 5.0), (1800.0, 4000, 0.04, 0.5), (5400.0, 15000, 0.15, INVALID),
         (9000.0, 10000, 0.10, 0.0)]
WORSE = [STEPS[0], (1800.0, 4000, 0.04, 5.0), *STEPS[2:]]  # step 2 not good enough to succeed


@pytest.fixture()
def linear(run_of, tmp_path):
    return linear_run(run_of("research-0"), tmp_path / "runs" / "a", STEPS, "20261202T100000-bbbbb1", 0)


def rows_at(run, *options: str) -> dict:
    code, out, err = mlab("eval", run, *[part for option in options for part in ("--at", option)], "--json")
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    return row


def test_each_budget_takes_the_snapshot_the_run_would_have_submitted_then(linear):
    row = rows_at(linear, "time=5m,30m,1h,2h,4h", "tokens=1k,19999,20k,1M", "cost=$0.1", "time=25%,50%")
    assert row["score_at_time_5m"] is None and row["success_at_time_5m"] is False  # nothing written yet
    assert row["score_at_time_30m"] == pytest.approx(0.5) and row["success_at_time_30m"] is True
    assert row["score_at_time_1h"] == pytest.approx(0.5)
    assert row["score_at_time_2h"] is None and row["success_at_time_2h"] is False  # step 3's file lacks y
    assert row["score_at_time_4h"] == pytest.approx(0.0)  # past the end: the final result
    assert row["score_at_tokens_1k"] == pytest.approx(5.0) and row["success_at_tokens_1k"] is False  # +4.1%
    assert row["score_at_tokens_19999"] == pytest.approx(0.5)
    assert row["score_at_tokens_20k"] is None
    assert row["score_at_tokens_1M"] == pytest.approx(0.0)
    assert row["score_at_cost_0.1"] == pytest.approx(0.5)
    assert row["score_at_time_25pct"] == pytest.approx(0.5)  # 45 min of the 3 h limit
    assert row["score_at_time_50pct"] is None                # 90 min: step 3, invalid
    points = json.loads((linear / "budgets.json").read_text())["points"]
    assert points["time_5m"]["status"] == "no submission" and points["time_2h"]["status"] == "invalid submission"
    assert points["time_30m"]["step"] == 2 and points["time_4h"]["final"] is True
    assert points["time_30m"]["improvement"] == pytest.approx((BASELINE - 0.5) / BASELINE)


def test_a_share_of_a_limit_the_run_lacks_is_not_applicable(linear):
    code, out, err = mlab("eval", linear, "--at", "cost=25%", "--at", "time=30m")
    assert code == 0, err
    assert "@cost=25%" in out.splitlines()[0] and "0.5*" in out.splitlines()[1]
    point = json.loads((linear / "budgets.json").read_text())["points"]["cost_25pct"]
    assert point["status"] == "not applicable" and point["success"] is None


def test_a_cost_budget_with_an_unknown_price_is_not_applicable(run_of, tmp_path):
    unpriced = [STEPS[0], (1800.0, 4000, None, 0.5), *STEPS[2:]]  # one call of a model without a price
    run = linear_run(run_of("research-0"), tmp_path / "runs" / "u", unpriced, "20261202T100000-bbbbb2", 0)
    row = rows_at(run, "cost=$0.005,$1", "time=30m")
    assert row["score_at_cost_0.005"] is None and row["success_at_cost_0.005"] is None  # not a failure
    assert row["score_at_cost_1"] is None and row["score_at_time_30m"] == pytest.approx(0.5)
    assert json.loads((run / "budgets.json").read_text())["points"]["cost_1"]["status"] == "not applicable"


def test_the_budget_columns_go_to_the_csv(linear, tmp_path):
    code, out, err = mlab("eval", linear, "--at", "time=30m,tokens=1k", "-o", tmp_path / "rows.csv")
    assert code == 0, err
    (row,) = pd.read_csv(tmp_path / "rows.csv").to_dict("records")
    assert row["score_at_time_30m"] == pytest.approx(0.5) and row["success_at_time_30m"]
    assert row["score_at_tokens_1k"] == pytest.approx(5.0) and not row["success_at_tokens_1k"]


@pytest.mark.parametrize("option, message", [
    ("time=1x", "--at time=1x: a time budget is a duration"),
    ("tokens=lots", "--at tokens=lots: a token budget is a count"),
    ("cost=€1", "--at cost=€1: a cost budget is in dollars"),
    ("speed=1", "unknown budget kind 'speed'; kinds are time, tokens, cost"),
    ("1h,2h", "say the kind first, as in time=1h"),
    ("time=0", "a budget must be more than 0"),
    ("time=150%", "a percentage above 0 and at most 100"),
    ("time=", "a budget is missing"),
    ("cost=,", "quote a dollar sign in the shell: --at 'cost=$1,$5'"),  # what a shell makes of cost=$1,$5
])
def test_a_bad_budget_is_a_usage_error(linear, option, message):
    code, out, err = mlab("eval", linear, "--at", option)
    assert code == 2 and message in err and "Traceback" not in err
    assert not (linear / "budgets.json").exists()


def _counting(monkeypatch) -> list:
    import mlab.reports.snapshot_score as scoring

    calls, real = [], scoring.score_snapshot
    monkeypatch.setattr(scoring, "score_snapshot", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    return calls


def test_snapshots_are_scored_once_and_a_second_call_scores_nothing(linear, monkeypatch):
    calls = _counting(monkeypatch)
    first = rows_at(linear, "time=30m,1h,2h")
    assert sorted(calls) == [2, 3]  # 30m and 1h are one snapshot; 2h another
    cached = json.loads((linear / "budgets.json").read_text())["snapshots"]
    assert len(cached) == 2 and all(key.startswith("submission.csv:") for key in cached)
    second = rows_at(linear, "time=30m,1h,2h", "time=45m")  # 45m: a new point on a scored snapshot
    assert calls == sorted(calls) and len(calls) == 2
    assert {k: v for k, v in second.items() if k in first} == first
    assert second["score_at_time_45m"] == pytest.approx(0.5)


def test_step_scores_of_eval_intermediate_are_reused(linear, monkeypatch):
    code, out, err = mlab("eval", "--intermediate", linear)
    assert code == 0, err
    calls = _counting(monkeypatch)
    row = rows_at(linear, "time=30m,2h", "tokens=1k")
    assert calls == [] and row["score_at_time_30m"] == pytest.approx(0.5) and row["score_at_tokens_1k"] == 5.0


def test_a_tree_search_submits_its_best_valid_node_finished_by_then(run_of, tmp_path):
    run = tree_run(run_of("research-0"), tmp_path / "tree", "20261202T100000-ccccc1", 0)
    row = rows_at(run, "time=0.5s,1.5s,3.5s,4.5s,5.5s,1m", "tokens=1000")
    assert row["score_at_time_0.5s"] is None                       # no node finished
    assert row["score_at_time_1.5s"] == pytest.approx(0.9)         # node 1 alone
    assert row["score_at_time_3.5s"] == pytest.approx(0.5)         # node 3 beats 1; node 2 is buggy
    assert row["score_at_time_4.5s"] == pytest.approx(0.5)         # node 4 (0.7) is no better
    assert row["score_at_time_5.5s"] == pytest.approx(0.4)         # node 5, before the closing record
    assert row["score_at_tokens_1000"] == pytest.approx(0.5)       # 100+200+300+400 tokens: nodes 1-4
    points = json.loads((run / "budgets.json").read_text())["points"]
    assert [points[f"time_{t}"]["node"] for t in ("1.5s", "3.5s", "4.5s", "5.5s")] == [1, 3, 3, 5]
    assert points["time_0.5s"]["status"] == "no submission" and points["time_1m"]["final"] is True


def test_a_holdout_search_chooses_by_holdout_among_the_best_by_validation(run_of, tmp_path):
    run = tree_run(run_of("research-0"), tmp_path / "tree", "20261202T100000-ccccc2", 0, select="holdout",
                   holdouts={1: 0.6, 3: 0.8, 4: 0.55, 5: 0.9})
    row = rows_at(run, "time=4.5s")
    # by validation nodes 3, 4, 1 are the best three; by holdout (MAE) node 4 wins: its submission scores 0.7
    assert row["score_at_time_4.5s"] == pytest.approx(0.7)


@pytest.fixture()
def budget_report(run_of, tmp_path):
    source, runs = run_of("research-0"), tmp_path / "runs"
    linear_run(source, runs / "a", STEPS, "20261202T100000-ddddd1", 0)
    linear_run(source, runs / "b", WORSE, "20261202T100000-ddddd2", 1)
    linear_run(source, runs / "c", STEPS, "20261202T100000-ddddd3", 2, time_limit=3600.0)
    code, out, err = mlab("eval", runs, "--at", "time=5m,30m,4h,50%", "--at", "cost=$0.1")
    assert code == 0, err
    code, out, err = mlab("report", runs, "-o", tmp_path / "report")
    assert code == 0, err
    return tmp_path / "report"


def test_the_report_has_success_at_each_budget_and_the_plot(budget_report):
    table = pd.read_csv(budget_report / "budget_success.csv")
    (row,) = table.to_dict("records")
    assert row["runs"] == 3
    assert row["time_5m_success"] == 0.0                                # nothing submitted yet, any run
    assert row["time_30m_success"] == pytest.approx(2 / 3)              # a and c at 0.5, b at 5.0
    assert row["time_4h_success"] == 1.0                                # every final result: MAE 0
    # 50% of 3 h is step 3's invalid file (a, b); of c's 1 h limit it is step 2 (0.5)
    assert row["time_50pct_success"] == pytest.approx(1 / 3)
    assert row["cost_0.1_success"] == pytest.approx(2 / 3)
    report = (budget_report / "report.md").read_text()
    assert "## Success rate at each budget" in report and "![budget scores](budget_scores.png)" in report
    assert "| runs | time 5m [95% CI] | time 30m [95% CI] | time 4h [95% CI] | time 50% [95% CI] |" in report
    assert (budget_report / "budget_scores.png").stat().st_size > 10_000
    points = pd.read_csv(budget_report / "budget_points.csv")
    assert sorted(points[points.budget == "time_30m"]["score"]) == pytest.approx([0.5, 0.5, 5.0])


def test_no_budget_section_without_budget_points(run_of, tmp_path):
    linear_run(run_of("research-0"), tmp_path / "runs" / "a", STEPS, "20261202T100000-eeeee1", 0)
    code, out, err = mlab("report", tmp_path / "runs", "-o", tmp_path / "report")
    assert code == 0, err
    assert "at each budget" not in (tmp_path / "report" / "report.md").read_text()
    assert not (tmp_path / "report" / "budget_scores.png").exists()


def test_success_at_a_budget_pooled_over_tasks_is_the_mean_of_the_task_rates():
    from mlab.reports.budget_report import success_at_budgets

    def point(task, run, success):
        return {"data_variant": "lite", "task": task, "agent": "research", "model": "m", "run_id": run,
                "budget": "time_1h", "kind": "time", "label": "1h", "share": None, "amount": 3600.0,
                "success": success}

    frame = pd.DataFrame([point("a", "r1", 1.0), point("a", "r2", 0.0), point("b", "r3", 1.0),
                          point("b", "r4", 1.0), point("b", "r5", 1.0), point("b", "r6", float("nan"))])
    table, budgets = success_at_budgets(frame)
    assert budgets == [("time_1h", "time 1h")]
    rows = {row["task"]: row for row in table.to_dict("records")}
    assert list(table["task"]) == ["a", "b", "all tasks"]
    assert rows["a"]["time_1h_success"] == 0.5 and rows["a"]["time_1h_runs"] == 2
    assert rows["b"]["time_1h_success"] == 1.0 and rows["b"]["time_1h_runs"] == 3  # r6: not applicable
    assert rows["all tasks"]["time_1h_success"] == 0.75 and rows["all tasks"]["runs"] == 6  # (0.5 + 1) / 2


def _figure_of(plot, *args):
    """The figure a plot function draws, kept open instead of only saved."""
    from unittest import mock

    from matplotlib.figure import Figure

    drawn = []
    with mock.patch.object(Figure, "savefig", lambda figure, *a, **k: drawn.append(figure)):
        plot(*args)
    (figure,) = drawn
    return figure


def test_the_budget_plot_draws_the_mean_score_at_each_budget(budget_report, tmp_path):
    from mlab.reports.budget_report import budget_plot

    frame = pd.read_csv(budget_report / "budget_points.csv")
    figure = _figure_of(budget_plot, frame, tmp_path / "budget_scores.png", 0)
    time_axis = next(axis for axis in figure.axes if axis.get_xlabel().startswith("wall time")
                     or axis.get_xlabel().startswith("time"))
    (line,) = [line for line in time_axis.get_lines() if not line.get_label().startswith("_")]
    amounts = sorted(frame[(frame.kind == "time") & frame.share.isna()]["amount"].unique())
    means = [frame[(frame.kind == "time") & frame.share.isna() & (frame.amount == a)]["score"].dropna().mean()
             for a in amounts]
    assert list(line.get_ydata()) == pytest.approx(means, nan_ok=True)
    assert means[1] == pytest.approx(2.0)   # 30 min: MAE 0.5, 0.5 and 5.0
    assert means[2] == pytest.approx(0.0)   # 4 h: every final result
    assert line.get_label() == "research · mlab/scripted"


def _as(run: Path, task: str, agent: str) -> Path:
    """The run as one of `agent` on `task` (a copy of the tiny task's build under that name)."""
    import shutil

    shutil.move(run / "build" / "tasks" / "tiny", run / "build" / "tasks" / task)
    if agent != "research":
        shutil.copytree(run / "build" / "agents" / "research", run / "build" / "agents" / agent)
    for name in ("run.json", "result.json"):
        document = json.loads((run / name).read_text())
        (run / name).write_text(json.dumps({**document, "task": task, "agent": agent}))
    return run


def test_the_all_tasks_row_at_each_budget_is_over_the_tasks_every_agent_ran(run_of, tmp_path):
    # research ran t1 (succeeds by 30 min) and t2 (does not); research-b ran t2 (succeeds) and t3 (does
    # not): the one task both ran is t2, so each agent's "all tasks" row is its t2 run alone
    source, runs = run_of("research-0"), tmp_path / "runs"
    made = [("t1", "research", STEPS), ("t2", "research", WORSE), ("t2", "research-b", STEPS),
            ("t3", "research-b", WORSE)]
    for number, (task, agent, steps) in enumerate(made):
        run_id = f"20261202T100000-fffff{number}"
        linear_run(source, runs / run_id, steps, run_id, 0)
    code, out, err = mlab("eval", runs, "--at", "time=30m")  # scored as runs of the tiny task, then renamed
    assert code == 0, err
    for number, (task, agent, _) in enumerate(made):
        _as(runs / f"20261202T100000-fffff{number}", task, agent)
    code, out, err = mlab("report", runs, "-o", tmp_path / "report")
    assert code == 0, err
    table = pd.read_csv(tmp_path / "report" / "budget_success.csv")
    rows = {(row["agent"], row["task"]): row for row in table.to_dict("records")}
    assert {key: row["time_30m_success"] for key, row in rows.items()} == {
        ("research", "t1"): 1.0, ("research", "t2"): 0.0, ("research", "all tasks"): 0.0,
        ("research-b", "t2"): 1.0, ("research-b", "t3"): 0.0, ("research-b", "all tasks"): 1.0}
    assert rows[("research", "all tasks")]["runs"] == rows[("research-b", "all tasks")]["runs"] == 1
