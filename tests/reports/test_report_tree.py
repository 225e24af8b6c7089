"""`mlab report` over tree-search runs (anytime curves per node, the chosen node, failure labels)
and over a tool agent that ran its fallback format; numbers checked against the runs' own records."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from handmade import TREE, renamed, tool_run, tree_run
from report_helpers import mlab
from mlab.reports.runs import load_run
from mlab.reports.taxonomy import failure_labels
from test_report import report  # noqa: F401  (the report of the linear runs)

ALL_BUGGY = [(1, None, "draft", None, True, "x = undefined\n"), (2, 1, "debug", None, True, "x = undefined2\n"),
             (3, 2, "debug", None, True, "x = undefined3\n")]
NOT_SCORED = [(1, None, "draft", None, False, "print('no score printed')\n")]


@pytest.fixture(scope="session")
def tree_runs(run_of, tmp_path_factory):
    root = tmp_path_factory.mktemp("tree-report")
    source = run_of("research-0")
    runs = root / "runs"
    renamed(tree_run(source, runs / "a"), "20261201T100000-aaaaa1", 0, "tree-greedy")
    renamed(tree_run(source, runs / "b", nodes=TREE[:4], submitted=3), "20261201T100000-aaaaa2", 1, "tree-greedy")
    renamed(tree_run(source, runs / "buggy", nodes=ALL_BUGGY, submitted=None, failure_mode="no valid node"),
            "20261201T100000-aaaaa3", 2, "tree-greedy")
    renamed(tree_run(source, runs / "unscored", nodes=NOT_SCORED, submitted=None, failure_mode="no valid node",
                     end_reason="time_limit"), "20261201T100000-aaaaa4", 3, "tree-greedy")
    fallback = renamed(tool_run(source, runs / "fallback"), "20261201T100000-aaaaa5", 0, "research-tools")
    result = json.loads((fallback / "result.json").read_text())
    result["reply_format"] = {"declared": "tools", "ran": "sections", "reason": "the server refused tools"}
    (fallback / "result.json").write_text(json.dumps(result))
    renamed(tool_run(source, runs / "tools"), "20261201T100000-aaaaa6", 1, "research-tools")
    out = root / "report"
    code, stdout, stderr = mlab("report", runs, "-o", out)
    assert code == 0, stderr
    return runs, out


def test_tree_runs_get_their_failure_labels(tree_runs):
    runs, _ = tree_runs
    labels = {name: [label.text() for label in failure_labels(load_run(runs / name))]
              for name in ("buggy", "unscored")}
    assert "all nodes buggy (3 node(s), every one buggy)" in labels["buggy"]
    assert "limit reached (nodes)" in labels["buggy"]  # a search's steps are its nodes
    assert not any(text.startswith("script failure") for text in labels["buggy"])  # crashes are debug's job
    assert "no valid node (1 node(s), 0 with a validation score and not buggy)" in labels["unscored"]
    assert "limit reached (time)" in labels["unscored"]
    assert not any("node" in text for text in
                   [label.text() for label in failure_labels(load_run(runs / "a"))])


def test_the_anytime_curve_is_the_best_validation_so_far_per_node(tree_runs):
    runs, out = tree_runs
    curves = pd.read_csv(out / "tree_anytime.csv")
    first = curves[curves.run_id == "20261201T100000-aaaaa1"].sort_values("node")
    # mae, lower is better: 0.9, node 2 buggy, 0.5, 0.7 (not better), 0.4
    assert first.best_validation.tolist() == [0.9, 0.9, 0.5, 0.5, 0.4]
    assert first[first.submitted].node.tolist() == [5]
    result = json.loads((runs / "a" / "result.json").read_text())
    assert first[first.submitted].test_score.tolist() == [result["score"]]
    buggy = curves[curves.run_id == "20261201T100000-aaaaa3"]
    assert buggy.best_validation.isna().all() and len(buggy) == 3
    data = (out / "tree_anytime.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert "](tree_anytime.png)" in (out / "report.md").read_text()


def test_the_tree_table_counts_nodes_and_the_chosen_node(tree_runs):
    _, out = tree_runs
    table = pd.read_csv(out / "tree_search.csv")
    (row,) = table.to_dict("records")
    assert row["agent"] == "tree-greedy" and row["runs"] == 4
    assert row["nodes_per_run"] == pytest.approx((5 + 4 + 3 + 1) / 4)
    assert row["valid_share"] == pytest.approx((4 + 3) / 13) and row["buggy_share"] == pytest.approx((1 + 1 + 3) / 13)
    assert row["best_validation"] == pytest.approx(0.45)  # median of 0.4 and 0.5 (no value for the others)
    assert row["chosen_is_best"] == 1.0
    text = (out / "report.md").read_text()
    assert "## Tree search: nodes and the chosen node" in text
    failures = pd.read_csv(out / "failures.csv")
    tree = failures[failures.agent == "tree-greedy"].iloc[0]
    assert tree["all nodes buggy"] == 1 and tree["no valid node"] == 1


def test_the_report_shows_a_reply_format_that_differs_from_the_declared_one(tree_runs):
    _, out = tree_runs
    table = pd.read_csv(out / "reply_formats.csv")
    assert table[["agent", "declared", "ran", "runs", "of_runs", "reasons"]].to_dict("records") == [
        {"agent": "research-tools", "declared": "tools", "ran": "sections", "runs": 1, "of_runs": 2,
         "reasons": "the server refused tools"}]
    text = (out / "report.md").read_text()
    assert "## Reply formats that ran other than declared" in text and "| 1 of 2 |" in text
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs.reply_format_ran.dropna()) == {"tools", "sections"}


def test_a_report_without_tree_or_fallback_runs_has_neither_table(report):
    names = {p.name for p in report.iterdir()}
    assert not {"tree_search.csv", "tree_anytime.png", "reply_formats.csv"} & names
