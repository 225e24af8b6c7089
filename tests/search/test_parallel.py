"""Node evaluations run at once, each in its own copy of the workspace."""
from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path

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


def lister(leave: bool, mae: float, scratch: str) -> str:
    """Lists its workspace and looks for a scratch file; with leave, leaves files, a folder it
    locks and that scratch file (in the script's temporary folder)."""
    leaving = ("import os, tempfile\n"
               "os.makedirs('junk/deeper')\n"
               "open('junk/deeper/x.txt', 'w').write('x')\n"
               "open('left.txt', 'w').write('x')\n"
               f"open(os.path.join(tempfile.gettempdir(), {scratch!r}), 'w').write('x')\n"
               "os.chmod('junk', 0)\n") if leave else ""
    return (leaving + "import json, os, tempfile\n"
            "print('FACTS ' + json.dumps({'here': sorted(os.listdir('.')), "
            f"'tmp_left': os.path.exists(os.path.join(tempfile.gettempdir(), {scratch!r}))}}))\n") + valid_code(mae)


def test_a_node_sees_its_parents_files_and_nothing_the_node_before_it_left(house_task, search_agent, scripted,
                                                                           script_sandbox, tmp_path):
    agent = search_agent(parallel=1)   # one thread: every node runs in the same folder, one after the other
    run = Run.create(house_task, agent, tmp_path / "runs", limits={"steps": 3})
    scratch = f"mlab-left-{uuid.uuid4().hex}.txt"
    try:
        SearchEngine(run, scripted([reply("A leaves files.", lister(True, 800.0, scratch)),
                                    reply("B, a second draft, scores better.", lister(False, 700.0, scratch)),
                                    reply("C improves B.", lister(False, 600.0, scratch))]),
                     agent=agent).run_until_done()
    finally:
        Path(tempfile.gettempdir(), scratch).unlink(missing_ok=True)   # the stand-in's is the harness's
    run.close()
    nodes = sorted((r for r in read_trace(run.dir / "trace.jsonl").records if "node" in r), key=lambda r: r["node"])
    a, b, c = (facts(record) for record in nodes)
    assert {"left.txt", "junk"} <= set(a["here"])
    assert "left.txt" not in b["here"] and "junk" not in b["here"]
    assert nodes[2]["parent"] == nodes[1]["node"] and "left.txt" not in c["here"]
    if script_sandbox == "bubblewrap":   # the stand-in runs scripts with the harness's own scratch folder
        assert not b["tmp_left"] and not c["tmp_left"]
    assert not (run.dir / "nodes").exists() or not any((run.dir / "nodes").iterdir())   # slots removed at the end
