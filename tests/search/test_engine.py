"""The search engine on house-price with scripted replies: nodes, validity, records, the end."""
from __future__ import annotations

import json

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from search_helpers import BROKEN_CODE, NO_SUBMISSION_CODE, reply, valid_code


def test_a_greedy_search_drafts_debugs_improves_and_submits_the_best_valid_node(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    # seed 0: node 3's coin (0.32) says debug, node 4's (0.67) says improve
    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 4})
    client = scripted([reply("Draft a constant.", valid_code(900.0, "first")),
                       reply("Draft something broken.", BROKEN_CODE),
                       reply("Fix the broken draft.", valid_code(500.0, "better")),
                       reply("Improve again.", NO_SUBMISSION_CODE)])
    engine = SearchEngine(run, client, agent=agent)
    outcome = engine.run_until_done()
    run.close()
    records = read_trace(run.dir / "trace.jsonl").records
    nodes = [r for r in records if "node" in r]
    assert [(r["node"], r["parent"], r["operator"], r["buggy"], r["validation"]) for r in nodes] == [
        (1, None, "draft", False, 900.0), (2, None, "draft", True, None), (3, 2, "debug", False, 500.0),
        (4, 3, "improve", True, 1.0)]
    # the node without a submission has a score but is buggy, and is never submitted
    assert "submission: no submission" in " ".join(nodes[3]["search"]["problems"])
    assert outcome.search == {"policy": "greedy", "nodes": 4, "valid_nodes": 2, "buggy_nodes": 2,
                              "submitted_node": 3, "submitted_validation": 500.0, "selected_by": "validation"}
    assert outcome.end_reason == "steps_limit" and outcome.failure_mode is None
    closing = records[-1]
    assert closing["status"] == "ended" and closing["search"]["submitted_node"] == 3
    # the run's workspace is node 3's: its code and its submission
    assert "better" in (run.dir / "workspace" / "train.py").read_text()
    assert (run.dir / "workspace" / "submission.csv").is_file()
    # each node's snapshot is a delta from its parent: node 3 rewrote node 2's train.py and wrote submission.csv
    assert sorted(nodes[2]["snapshot"]["changed"]) == ["submission.csv", "train.py"]
    assert nodes[1]["status"] == "error" and nodes[0]["status"] == "ok"
    assert not (run.dir / "nodes").exists() or not any((run.dir / "nodes").iterdir())
    # mlab checkout: the submitted node by default, any node by number, a step by the node it made
    import pytest

    from mlab.errors import UsageError
    from mlab.run.checkout import checkout

    checkout(run.dir, None, tmp_path / "final")
    assert "better" in (tmp_path / "final" / "train.py").read_text()
    checkout(run.dir, None, tmp_path / "first", node=1)
    assert "first" in (tmp_path / "first" / "train.py").read_text()
    assert (tmp_path / "first" / "submission.csv").is_file()
    checkout(run.dir, 2, tmp_path / "second")
    assert (tmp_path / "second" / "train.py").read_text() == BROKEN_CODE
    assert not (tmp_path / "second" / "submission.csv").exists()
    with pytest.raises(UsageError, match="there is no node 9"):
        checkout(run.dir, None, tmp_path / "none", node=9)
    # every record, nodes and the closing one, is a valid trace record
    from mlabc.schemas import problems

    assert [problems("trace", record) for record in records] == [[]] * len(records)


def test_the_token_limit_ends_the_search_and_the_best_node_is_still_submitted(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 5, "tokens": 1})
    outcome = SearchEngine(run, scripted([reply("One.", valid_code(3.0))]), agent=agent).run_until_done()
    run.close()
    assert outcome.end_reason == "tokens_limit" and outcome.failure_mode is None
    assert outcome.search["nodes"] == 1 and outcome.search["submitted_node"] == 1
    # killed after the closing record, before result.json: a resume finds the same submission
    resumed = Run.resume(run.dir)
    again = SearchEngine(resumed, scripted([]), agent=agent).run_until_done()
    resumed.close()
    assert (again.end_reason, again.search) == (outcome.end_reason, outcome.search)
    assert "validation mae: 3.0" in (run.dir / "workspace" / "train.py").read_text()


def test_the_time_limit_is_wall_time_and_bounds_a_running_script(house_task, search_agent, scripted,
                                                                 script_sandbox, tmp_path):
    import time

    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 5, "time": 2.0})
    started = time.monotonic()
    outcome = SearchEngine(run, scripted([reply("Slow.", "import time\ntime.sleep(60)\n")]),
                           agent=agent).run_until_done()
    run.close()
    assert time.monotonic() - started < 20
    assert outcome.end_reason == "time_limit" and outcome.failure_mode == "no valid node"
    node = next(r for r in run.records if "node" in r)
    assert node["compute"]["timed_out"] and "the script did not run to the end" in node["search"]["problems"]


def test_a_spent_token_limit_stops_an_operator_s_format_retries_and_ends_the_search(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 5, "tokens": 1})
    client = scripted(["No code in this reply.", reply("One.", valid_code(3.0))])
    outcome = SearchEngine(run, client, agent=agent).run_until_done()
    run.close()
    # the first reply spent the budget: its format retry is not made, and the node is recorded with its call
    assert outcome.end_reason == "tokens_limit" and outcome.search["nodes"] == 1
    assert client.budget.spent.calls == 1
    [node] = [r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r]
    assert node["buggy"] and len(node["model"]["calls"]) == 1
    assert node["model"]["format_errors"][-1] == "not asked again: the run's tokens limit was reached"
