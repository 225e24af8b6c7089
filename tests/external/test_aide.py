"""The std `aide` agent (aideml 0.2.2 without its pinned stack, beside what its code imports), installed
into its own cached environment and driven through the gateway by a scripted model: one AIDE step
(a draft from the code model, a review as a tool call from the feedback model), then
its best script run once more on the task. Skipped with the reason when PyPI cannot be reached."""
from __future__ import annotations

import sys

import pytest

from agent_helpers import FIT_PY, mlab, only_run, result, scripted, trace, trace_problems
from network_seen import assert_only_the_gateway
from mlab.documents.view import thaw
from mlab.sandbox.runner import sandbox_available
from needs import missing

AIDE_FIT = FIT_PY.replace('open("train.csv")', 'open("input/train.csv")').replace(
    'open("test.csv")', 'open("input/test.csv")').replace('"submission.csv"', '"working/submission.csv"') + \
    'print("Validation MAE: 0.0")\n'


@pytest.fixture(scope="module")
def aide_installed(tiny_task):
    from mlab.build import compile_into_cache
    from mlab.external.environment import AgentEnvironmentError, prepare_environment

    if not sandbox_available()[0]:
        missing("bubblewrap cannot start a sandbox here")
    spec = thaw(compile_into_cache([tiny_task]).agent("aide").view.external)
    try:
        return prepare_environment("aide", spec["requires"], sys.executable, say=lambda line: None,
                                   no_deps=spec["no_deps"])
    except AgentEnvironmentError as problem:
        if "no matching distribution" in str(problem) or "connection" in str(problem).lower():
            missing(f"PyPI cannot be reached: {problem}")
        raise


def test_aide_runs_one_step_and_its_best_script_is_scored(tmp_path, tiny_task, aide_installed):
    review = {"name": "submit_review", "arguments": {"is_bug": False, "summary": "a straight line fits the data",
                                                      "metric": 0.0, "lower_is_better": True}}
    replies = [f"Fit y = 2x + 1 on the training rows.\n\n```python\n{AIDE_FIT}```\n",
               {"content": None, "tool_calls": [review]}]
    code, out, err = mlab("run", tiny_task, "--agent", "aide", "--model", scripted(tmp_path, replies),
                          "--steps", "2", "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    log = (run / "output" / "agent.log").read_text()
    assert document["score"] == pytest.approx(0.0) and document["success"], log[-3000:]
    assert document["agent_kind"] == "external" and document["model_calls"] == 2
    calls = [r for r in trace(run) if (r["model"] or {}).get("external")]
    assert trace_problems(run) == [] and len(calls) == 2
    assert calls[1]["model"]["request"]["tools"][0]["function"]["name"] == "submit_review", \
        "AIDE's review went through the gateway as a tool call"
    assert (run / "workspace" / "aide_best_solution.py").is_file()
    assert_only_the_gateway(log)
