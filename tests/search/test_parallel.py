"""Node evaluations run at once, each in its own copy of the workspace."""
from __future__ import annotations

import json

from mlab.run.folder import Run
from mlab.search.engine import SearchEngine
from mlab.trace import read_trace

from search_helpers import reply, valid_code


def writer(name: str) -> str:
    """Writes shared.txt, waits, reads it back: another node's write would show."""
    return ("import json, os, time\n"
            "started = time.time()\n"
            "before = open('shared.txt').read() if os.path.exists('shared.txt') else None\n"
            f"open('shared.txt', 'w').write({name!r})\n"
            "time.sleep(1.0)\n"
            "print('FACTS ' + json.dumps({'before': before, 'after': open('shared.txt').read(), "
            "'started': started, 'ended': time.time()}))\n") + valid_code(800.0)


def facts(record) -> dict:
    line = next(line for line in record["observation"].splitlines() if line.startswith("FACTS "))
    return json.loads(line[len("FACTS "):])


def test_two_nodes_evaluated_at_once_do_not_see_each_other(house_task, search_agent, scripted, script_sandbox,
                                                           tmp_path):
    agent = search_agent(parallel=2)
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 2})
    SearchEngine(run, scripted([reply("A.", writer("A")), reply("B.", writer("B"))]), agent=agent).run_until_done()
    run.close()
    nodes = sorted((r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r), key=lambda r: r["node"])
    a, b = facts(nodes[0]), facts(nodes[1])
    assert (a["before"], a["after"], b["before"], b["after"]) == (None, "A", None, "B")
    assert a["started"] < b["ended"] and b["started"] < a["ended"]  # they ran at the same time
    assert [r["snapshot"]["changed"].keys() >= {"shared.txt"} for r in nodes] == [True, True]
