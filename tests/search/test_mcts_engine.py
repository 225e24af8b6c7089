"""MCTS through the engine with scripted replies: killed after three nodes with a torn trace line,
resumed, it makes the tree the uninterrupted run makes, walk for walk."""
from __future__ import annotations

import math

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from search_helpers import BROKEN_CODE, client_resumed, reply, valid_code

PARAMS = {"exploration": 1.414, "children": 2, "max_debug_depth": 1, "steps": 6}
REPLIES = [reply("Draft A.", valid_code(900.0, "a")), reply("Draft B.", BROKEN_CODE),
           reply("Next.", valid_code(700.0, "c")), reply("Next.", BROKEN_CODE),
           reply("Next.", valid_code(650.0, "e")), reply("Next.", valid_code(600.0, "f"))]


def shape(records):
    return [(r["node"], r["parent"], r["operator"], r["validation"], r["search"].get("path"),
             r["search"].get("uct"), r["search"]["random"]) for r in records if "node" in r]


def test_mcts_killed_after_three_nodes_resumes_into_the_uninterrupted_tree(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    agent = search_agent(policy="mcts", params=PARAMS)
    whole = Run.create(house_task, agent, tmp_path / "whole", limits={"steps": 10})
    assert SearchEngine(whole, scripted(REPLIES, "whole.json"), agent=agent).run_until_done().end_reason \
        == "search_done"
    whole.close()
    expected = shape(read_trace(whole.dir / "trace.jsonl").records)
    # two drafts fill the root (children 2); then the walk goes by UCT: after node 3 (700, lower is
    # better) draft 1's branch has values 0 and 1 over two visits, buggy draft 2 one visit of 0
    assert [(n[0], n[1], n[2]) for n in expected] == [(1, None, "draft"), (2, None, "draft"), (3, 1, "improve"),
                                                      (4, 1, "improve"), (5, 2, "debug"), (6, 2, "debug")]
    assert expected[3][5] == [round(0.5 + 1.414 * math.sqrt(math.log(3) / 2), 4)]

    run = Run.create(house_task, agent, tmp_path / "parts", limits={"steps": 10})
    made = []
    engine = SearchEngine(run, scripted(REPLIES, "first.json"), agent=agent,
                          on_node=lambda record, verdict, usage: made.append(record["node"]),
                          should_stop=lambda: len(made) >= 3)
    assert engine.run_until_done().end_reason == "interrupted"
    run.close()
    with open(run.dir / "trace.jsonl", "ab") as trace:  # what a kill -9 in the middle of a write leaves
        trace.write(b'{"step": 4, "node": 4, "torn')
    resumed = Run.resume(run.dir)
    SearchEngine(resumed, client_resumed(scripted, REPLIES, resumed.records), agent=agent).run_until_done()
    resumed.close()
    assert shape(read_trace(run.dir / "trace.jsonl").records) == expected
