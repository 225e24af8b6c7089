"""Evolution through the engine with scripted replies: a crossover's two parents in its record, and a
run killed in the middle of a generation that resumes from the facts its trace recorded."""
from __future__ import annotations

from dataclasses import replace

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from search_helpers import client_resumed, reply, valid_code

PARAMS = {"population": 2, "islands": 1, "crossover_probability": 1.0, "migration_probability": 0.0,
          "temperature_start": 1.0, "temperature_end": 0.1, "generations": 1}
REPLIES = [reply("Draft A.", valid_code(900.0, "a")), reply("Draft B.", valid_code(700.0, "b")),
           reply("Cross them.", valid_code(650.0, "c")), reply("Cross again.", valid_code(600.0, "d"))]


def evolution_agent(search_agent):
    agent = search_agent(policy="evolution", params=PARAMS, operators=["draft", "improve", "debug", "crossover"])
    crossover = "Cross node {{ parents[0].plan }} with {{ parents[1].plan }}:\n{{ parents[0].code }}\n{{ parents[1].code }}\n"
    return replace(agent, templates={**agent.templates, "crossover": crossover})


def shape(records):
    return [(r["node"], r["parent"], r["operator"], r["action_input"]["parents"], r["validation"],
             r["search"].get("island"), r["search"].get("generation"), r["search"]["random"])
            for r in records if "node" in r]


def test_evolution_killed_mid_generation_resumes_from_the_recorded_islands_and_generations(
        house_task, search_agent, scripted, stand_in_sandbox, tmp_path):
    agent = evolution_agent(search_agent)
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 10})
    made = []
    engine = SearchEngine(run, scripted(REPLIES, "first.json"), agent=agent,
                          on_node=lambda record, verdict, usage: made.append(record["node"]),
                          should_stop=lambda: len(made) >= 3)
    assert engine.run_until_done().end_reason == "interrupted"
    run.close()
    with open(run.dir / "trace.jsonl", "ab") as trace:  # what a kill -9 in the middle of a write leaves
        trace.write(b'{"step": 4, "node": 4, "torn')

    resumed = Run.resume(run.dir)
    engine = SearchEngine(resumed, client_resumed(scripted, REPLIES, resumed.records), agent=agent)
    outcome = engine.run_until_done()
    resumed.close()
    nodes = shape(read_trace(run.dir / "trace.jsonl").records)
    # the seeds, then generation 1: two crossovers, each drawing both parents (best first here)
    crossed = [node[3] for node in nodes[2:]]
    assert [node[:3] for node in nodes] == [(1, None, "draft"), (2, None, "draft"),
                                            (3, crossed[0][0], "crossover"), (4, crossed[1][0], "crossover")]
    assert all(sorted(pair) == [1, 2] for pair in crossed)
    assert [(n[5], n[6]) for n in nodes] == [(0, 0), (0, 0), (0, 1), (0, 1)]
    assert outcome.end_reason == "search_done" and outcome.search["submitted_node"] == 4
    # node 4 was decided after the resume: from island and generation facts read back from the trace
    # (without them the island would have no member and node 4 would be a draft)
    assert nodes[3][7] == f"{resumed.meta.get('seed', 0)}:4"
