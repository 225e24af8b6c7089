"""`mlab run --agent tree-greedy` through the CLI: the engine runs instead of the loop, `kill -9` in
the middle of a node leaves a resumable tree, --resume finishes it into the tree an uninterrupted
run makes, result.json names the submitted node, checkout gives it."""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time

from mlab.trace import read_trace

from search_helpers import reply


def scored(price: float, claimed: float) -> str:
    """tree-greedy reads `Validation score: N`; the script submits one constant price."""
    return ("import csv\n"
            "ids = [row['Id'] for row in csv.DictReader(open('test.csv'))]\n"
            "with open('submission.csv', 'w') as out:\n"
            f"    out.write('Id,SalePrice\\n' + ''.join(f'{{i}},{price}\\n' for i in ids))\n"
            f"print('Validation score: {claimed}')\n")


def mlab(*args) -> tuple[int, str, str]:
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_tree_greedy_runs_in_the_engine_is_killed_resumes_and_submits_its_best_node(house_build, house_task,
                                                                                   tmp_path):
    replies = tmp_path / "replies.json"
    slow = "import time\ntime.sleep(2)\n" + scored(170000.0, 35000.0)  # node 2 is running when the kill comes
    replies.write_text(json.dumps([reply("Median price.", scored(160000.0, 40000.0)), reply("A better guess.", slow),
                                   reply("Worse.", scored(90000.0, 90000.0))]))
    runs = tmp_path / "runs"
    with open(tmp_path / "out.txt", "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "mlab.cli", "run", "house-price", "--build", str(house_build),
                                    "--agent", "tree-greedy", "--model", f"mlab/scripted:{replies}", "--steps", "3",
                                    "--runs-dir", str(runs), "--plain"], stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=dict(os.environ), start_new_session=True)
    def first_node_recorded() -> bool:
        return any(b'"node":1,' in trace.read_bytes() for trace in runs.glob("*/trace.jsonl"))

    deadline = time.monotonic() + 120
    while not first_node_recorded():
        assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "out.txt").read_text()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    run_dir = next(runs.iterdir())
    assert [r.get("node") for r in read_trace(run_dir / "trace.jsonl").records] == [1]

    code, out, err = mlab("run", "--resume", run_dir, "--plain")
    assert code == 0, err
    records = read_trace(run_dir / "trace.jsonl").records
    assert [(r.get("node"), r.get("operator"), r.get("validation")) for r in records] == [
        (1, "draft", 40000.0), (2, "draft", 35000.0), (3, "draft", 90000.0), (None, None, None)]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["search"] == {"policy": "greedy", "nodes": 3, "valid_nodes": 3, "buggy_nodes": 0,
                                "submitted_node": 2, "submitted_validation": 35000.0, "selected_by": "validation"}
    assert result["agent"] == "tree-greedy" and result["steps"] == 3 and result["score"] is not None
    assert "Traceback" not in err

    code, out, err = mlab("checkout", run_dir, tmp_path / "final")
    assert code == 0 and "the final workspace" in out
    assert "170000.0" in (tmp_path / "final" / "train.py").read_text()
    code, out, err = mlab("checkout", run_dir, "--node", 3, tmp_path / "node3")  # any node's, by number
    assert code == 0 and f"checked out node 3 of {run_dir} into {tmp_path / 'node3'}" in out, err
    assert "90000.0" in (tmp_path / "node3" / "train.py").read_text()
    code, out, err = mlab("checkout", run_dir, "--node", 9, tmp_path / "node9")
    assert code != 0 and "node 9" in err and "Traceback" not in err


def test_holdout_selection_without_a_validation_split_is_refused_before_a_run_folder_is_made(tmp_path):
    from pathlib import Path

    from mlabc.api import compile_paths

    repo = Path(__file__).resolve().parents[2]
    source = tmp_path / "holdout.mlab"
    source.write_text('use std "agents"\nagent tree-holdout extends tree-greedy {\n  search greedy { select holdout }\n}\n')
    compiled, manifest = compile_paths([str(repo / "tasks" / "house-price.mlab"), str(source)], tmp_path / "build")
    assert manifest is not None, compiled.diagnostics
    code, _, err = mlab("run", "house-price", "--build", tmp_path / "build", "--agent", "tree-holdout",
                        "--model", "mlab/demo", "--runs-dir", tmp_path / "runs")
    assert code == 2 and "holds out no validation split; declare one" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()
