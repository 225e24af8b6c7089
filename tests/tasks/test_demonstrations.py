"""Every task's demonstration wins: `mlab run TASK --model mlab/demo` on lite data succeeds.

The demonstration (tasks/<task>/demo.json, version 2) writes the task's reference solution
(tasks/<task>/solution/<file>) over the starter, runs it and submits; the run must beat the
recorded (or measured) baseline by the task's threshold. These runs train real models, so they
are the `slow` tier (pyproject.toml's markers): the whole suite and CI run them, `pytest -m "not
slow"` leaves them out. The timed tasks and the vision tasks take longest (timed scoring runs the
starter and the solution side by side for several rounds).
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from task_helpers import REPO

TASKS = REPO / "tasks"

DEMO_TASKS = [
    "spaceship-titanic", "parkinsons-disease", "feedback", "imdb", "vectorization", "llama-inference",
    "ogbn-arxiv", "fathomnet", "identify-contrails", "clrs", "babylm", "cifar10",
]


def mlab(*args) -> tuple[int, str, str]:
    """`mlab ARGS` through the CLI's main, in this process: exit code, stdout, stderr."""
    from mlab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def demonstration(task: str) -> dict:
    return json.loads((TASKS / task / "demo.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("task", DEMO_TASKS)
def test_the_demonstration_writes_the_reference_solution(task):
    document = demonstration(task)
    assert (document["format"], document["version"]) == ("mlab-demonstration", 2)
    solution = document["solution"]
    written = [s["input"]["content"] for s in document["steps"]
               if s["action"] == "Write File" and s["input"]["file_name"] == solution]
    assert written, f"{task}: the demonstration never writes {solution}"
    assert written[-1] == (TASKS / task / "solution" / solution).read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("task", DEMO_TASKS)
def test_the_demonstration_wins(task, suite_cache, tmp_path):
    code, out, err = mlab("run", task, "--model", "mlab/demo", "--runs-dir", tmp_path)
    assert code == 0, err
    (run_dir,) = [p for p in Path(tmp_path).iterdir() if p.is_dir()]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["demo"] is True and result["end_reason"] == "final_answer"
    assert result["failure_mode"] is None, result.get("detail")
    assert result["success"] is True, (result["score"], result["baseline"], result["improvement"])
