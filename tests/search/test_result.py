"""result.json of a tree search: the submitted node scored like any run, the search summary, the
failure mode when no node is valid; scores read by the fast model's review."""
from __future__ import annotations

import json

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine, write_search_result

from search_helpers import BROKEN_CODE, NO_SUBMISSION_CODE, reply, tiers_of, valid_code

# the review as a call of the submit_review tool (a model that takes tools), the others as text
REVIEW_OK = {"content": "", "tool_calls": [{"name": "submit_review", "arguments": {
    "is_bug": False, "metric": 41000.5, "summary": "ran; validation MAE 41000.5"}}]}


def finish(run, engine):
    outcome = engine.run_until_done()
    result = write_search_result(run, outcome, tiers_of(engine.client), {"api_base": None}, demo=False)
    run.close()
    return result


def test_the_submitted_node_is_scored_and_named_in_result_json(house_task, search_agent, scripted,
                                                               stand_in_sandbox, tmp_path):
    agent = search_agent(score={"from": "review"})
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 3})
    client = scripted([reply("A constant.", valid_code(1.0)), REVIEW_OK,
                       reply("Broken.", BROKEN_CODE), "not json at all", "still not json", "nor this",
                       reply("Another.", valid_code(2.0)),
                       json.dumps({"is_bug": True, "metric": 10.0, "summary": "the split leaks"})])
    result = finish(run, SearchEngine(run, client, agent=agent))
    assert result["search"] == {"policy": "greedy", "nodes": 3, "valid_nodes": 1, "buggy_nodes": 2,
                                "submitted_node": 1, "submitted_validation": 41000.5, "selected_by": "validation"}
    assert result["schema_version"] == 5 and result["agent_kind"] == "search" and result["score"] is not None and result["submitted"] is True
    assert result["steps"] == 3 and result["failure_mode"] in (None, "small improvement")
    trace = [json.loads(line) for line in (run.dir / "trace.jsonl").read_text().splitlines()]
    assert trace[0]["search"]["summary"] == "ran; validation MAE 41000.5"
    assert trace[1]["search"]["review"]["summary"].startswith("the review could not be read")
    assert "the review found a bug" in trace[2]["search"]["problems"]
    assert result["model_calls"] == 8  # three operator replies, five review replies (two format retries)


def test_a_search_without_a_valid_node_fails_as_no_valid_node(house_task, search_agent, scripted,
                                                              stand_in_sandbox, tmp_path):
    agent = search_agent()
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 3})
    client = scripted([reply("Broken.", BROKEN_CODE), reply("Nothing submitted.", NO_SUBMISSION_CODE),
                       "a reply with no code block", "still none", "none again"])
    result = finish(run, SearchEngine(run, client, agent=agent))
    assert result["failure_mode"] == "no valid node" and result["success"] is False
    assert result["search"]["submitted_node"] is None and result["search"]["valid_nodes"] == 0
    assert result["search"]["buggy_nodes"] == 3
    last = json.loads((run.dir / "trace.jsonl").read_text().splitlines()[2])
    assert last["buggy"] and "no usable plan and code after 3 attempt(s)" in last["observation"]


def test_a_review_past_the_token_limit_is_not_asked_and_the_node_is_recorded_unreviewed(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    agent = search_agent(score={"from": "review"})
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 3, "tokens": 1})
    client = scripted([reply("A constant.", valid_code(1.0)), REVIEW_OK])
    result = finish(run, SearchEngine(run, client, agent=agent))
    assert (result["end_reason"], result["failure_mode"]) == ("tokens_limit", "no valid node")
    assert result["model_calls"] == 1 and result["search"]["nodes"] == 1
    node = json.loads((run.dir / "trace.jsonl").read_text().splitlines()[0])
    assert node["search"]["review"]["summary"] == \
        "the review could not be read: not asked: the run's tokens limit was reached"
