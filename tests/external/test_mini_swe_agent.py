"""The std `mini-swe-agent` agent, installed from PyPI into its cached environment (once per session,
or kept in $MLAB_AGENT_ENVS), driven through the gateway by a scripted model until house-price has
a scored result.json. Skipped with the reason when PyPI cannot be reached."""
from __future__ import annotations

import json
import sys

import pytest

from agent_helpers import mlab, only_run, result, scripted, trace, trace_problems
from network_seen import assert_only_the_gateway
from mlab.sandbox.runner import sandbox_available
from needs import missing


def bash(thought: str, command: str) -> str:
    """A reply in mini-swe-agent's format: a thought, then exactly one bash block."""
    return f"THOUGHT: {thought}\n\n```bash\n{command}\n```\n"


@pytest.fixture(scope="module")
def mini_installed():
    """The std agent's environment, made once; the test is skipped when pip cannot reach PyPI."""
    from mlab.build import resolve_task
    from mlab.cli.run import with_std_external
    from mlab.external.environment import AgentEnvironmentError, prepare_environment

    if not sandbox_available()[0]:
        missing("bubblewrap cannot start a sandbox here")
    task = with_std_external(resolve_task("house-price"))
    agent = task.build.agent("mini-swe-agent")
    try:
        return prepare_environment("mini-swe-agent", list(agent.view.external.requires), sys.executable,
                                   say=lambda line: None)
    except AgentEnvironmentError as problem:
        if "could not be installed" in str(problem) and ("connection" in str(problem).lower()
                                                           or "no matching distribution" in str(problem)):
            missing(f"PyPI cannot be reached: {problem}")
        raise


def test_mini_swe_agent_scores_house_price(tmp_path, mini_installed):
    replies = [bash("Run the starter to get a first submission.", "python train.py"),
               bash("Check the submission format.", "head -3 submission.csv && wc -l submission.csv"),
               bash("The submission is written.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")]
    code, out, err = mlab("run", "house-price", "--agent", "mini-swe-agent", "--model", scripted(tmp_path, replies),
                          "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    assert document["agent_kind"] == "external" and document["score"] is not None, err
    assert document["model_calls"] == 3 and document["end_reason"] == "agent_exited"
    calls = [r for r in trace(run) if (r["model"] or {}).get("external")]
    assert len(calls) == 3 and trace_problems(run) == []
    system = calls[0]["model"]["request"]["messages"][0]
    assert system["role"] == "system" and "bash code block" in system["content"], "mini's own prompt went through"
    task = calls[0]["model"]["request"]["messages"][1]["content"]
    assert "submission.csv" in task and "SalePrice" in task
    seen = calls[2]["model"]["request"]["messages"][-1]["content"]
    assert "Id,SalePrice" in seen, "the agent ran its commands in the workspace and saw their output"
    assert "submission.csv" in calls[1]["snapshot"]["changed"]
    log = (run / "output" / "agent.log").read_text()
    assert "mini-swe-agent" in log.lower() or "COMPLETE_TASK" in log
    assert_only_the_gateway(log)
    assert json.loads((run / "result.json").read_text())["models"]["main"]["model"].startswith("mlab/scripted:")


@pytest.mark.slow
def test_a_token_limit_ends_mini_swe_agents_run_with_its_failure_mode(tmp_path, mini_installed):
    """The call past the token limit gets the chat dialect's rate-limit error; mini-swe-agent's own
    retries do not outlast the gateway's grace, and the run ends `tokens_limit`. (mini asks for whole
    replies, so no stream of its can stall.)"""
    replies = [bash("Look around.", "ls")] * 3
    code, out, err = mlab("run", "house-price", "--agent", "mini-swe-agent", "--model", scripted(tmp_path, replies),
                          "--tokens", "100", "--runs-dir", tmp_path / "runs")
    run = only_run(tmp_path / "runs")
    document = result(run)
    assert document["end_reason"] == "tokens_limit" and document["failure_mode"] == "limit reached", err
    assert len([r for r in trace(run) if (r["model"] or {}).get("external")]) == 1
    assert "tokens limit" in trace(run)[-1]["observation"]
