"""A tree search stopped in the middle (a kill leaves a torn last line) resumes into the same tree."""
from __future__ import annotations

import re

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from search_helpers import BROKEN_CODE, client_resumed, reply, valid_code

REPLIES = [reply("Draft A.", valid_code(900.0, "a")), reply("Draft B.", BROKEN_CODE),
           reply("Next.", valid_code(700.0, "c")), reply("Next.", valid_code(600.0, "d")),
           reply("Next.", BROKEN_CODE), reply("Next.", valid_code(650.0, "f"))]


def shape(records):
    return [(r["node"], r["parent"], r["operator"], r["validation"], r["buggy"], r["search"]["random"])
            for r in records if "node" in r]


def test_resume_in_the_middle_of_a_tree_continues_with_the_same_decisions(
        house_task, search_agent, scripted, script_sandbox, tmp_path):
    agent = search_agent()
    whole = Run.create(house_task, agent, tmp_path / "whole", limits={"steps": 6})
    SearchEngine(whole, scripted(REPLIES, "whole.json"), agent=agent).run_until_done()
    whole.close()
    expected = read_trace(whole.dir / "trace.jsonl").records

    run = Run.create(house_task, agent, tmp_path / "parts", limits={"steps": 6})
    made = []
    engine = SearchEngine(run, scripted(REPLIES, "first.json"), agent=agent,
                          on_node=lambda record, verdict, usage: made.append(record["node"]),
                          should_stop=lambda: len(made) >= 3)
    assert engine.run_until_done().end_reason == "interrupted"
    run.close()
    with open(run.dir / "trace.jsonl", "ab") as trace:  # what a kill -9 in the middle of a write leaves
        trace.write(b'{"step": 4, "node": 4, "torn')

    resumed = Run.resume(run.dir)
    assert [r["node"] for r in resumed.records] == [1, 2, 3]
    engine = SearchEngine(resumed, client_resumed(scripted, REPLIES, resumed.records), agent=agent)
    assert [n.id for n in engine.tree.valid()] == [1, 3]
    outcome = engine.run_until_done()
    resumed.close()
    records = read_trace(run.dir / "trace.jsonl").records
    assert shape(records) == shape(expected) and len(shape(records)) == 6
    # the nodes made after the resume were asked what the uninterrupted run asked (but for the
    # scripts' measured times and memory in the outputs shown)
    def prompts(trace):
        return [re.sub(r"[0-9.]+ s (wall|CPU)|peak memory [0-9.]+ \w+", "(measured)", r["model"]["prompt"])
                for r in trace if "node" in r]

    assert prompts(records) == prompts(expected)
    assert outcome.search["submitted_node"] == 4 and outcome.search["submitted_validation"] == 600.0
    assert "d" in (run.dir / "workspace" / "train.py").read_text()
