"""Every standard tool agent through an OpenAI-compatible server (litellm's `openai/` provider at
--api-base): with native tool calls, and in its fallback format when the server refuses tools;
and research-tools played end to end by mlab/demo on house-price."""
import pytest

from agent_helpers import mlab, only_run, research_reply, result, trace, trace_problems
from fake_openai import FakeOpenAI, tool_call

MODEL = "openai/gpt-4o"
TOOL_AGENTS = ["research-tools", "react-tools", "basic-tools"]
SECTIONS = "Reflection: none yet\nResearch Plan and Status: 1. fit 2. submit\nFact Check: nothing\nThought: fit it"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")


@pytest.mark.parametrize("agent", TOOL_AGENTS)
def test_a_std_tool_agent_runs_on_tool_calls_and_on_its_fallback(key, agent, tiny_task, tmp_path):
    replies = [tool_call("execute_script", {"script_name": "fit.py"}, "call_1", content=SECTIONS),
               tool_call("final_answer", {"final_answer": "fitted y = 2x + 1"}, "call_2", content=SECTIONS)]
    with FakeOpenAI(replies) as server:
        code, _, err = mlab("run", tiny_task, "--agent", agent, "--model", MODEL, "--api-base", server.base,
                            "--runs-dir", tmp_path / "tools")
    assert code == 0, err
    run_dir = only_run(tmp_path / "tools")
    records = trace(run_dir)
    assert [r["model"]["tool_call"]["name"] for r in records] == ["execute_script", "final_answer"]
    assert all(r["model"]["format_errors"] == [] for r in records)
    assert server.requests[0]["tool_choice"] == "required" and server.requests[0]["messages"][0]["role"] == "system"
    assert result(run_dir)["reply_format"] == {"declared": "tools", "ran": "tools", "reason": None}
    assert trace_problems(run_dir) == []

    text = [research_reply("Execute Script", {"script_name": "fit.py"}),
            research_reply("Final Answer", {"final_answer": "fitted"})]
    with FakeOpenAI(text, refuse_tools=True) as server:
        code, _, err = mlab("run", tiny_task, "--agent", agent, "--model", MODEL, "--api-base", server.base,
                            "--runs-dir", tmp_path / "text")
    assert code == 0, err
    run_dir = only_run(tmp_path / "text")
    assert [r["action"] for r in trace(run_dir)] == ["Execute Script", "Final Answer"]
    document = result(run_dir)
    assert document["reply_format"]["ran"] == "sections" and document["success"] is True
    assert "Action Input" in server.requests[1]["messages"][0]["content"]  # the fallback's format, as text


def test_research_tools_plays_the_house_price_demonstration_to_a_success(tmp_path):
    code, out, err = mlab("run", "house-price", "--agent", "research-tools", "--model", "mlab/demo",
                          "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Inspect Script Lines", "Execute Script", "Read File",
                                             "Write File", "Execute Script", "Final Answer"]
    assert all(r["model"]["format"] == "tools" and r["model"]["format_errors"] == [] for r in records)
    assert records[0]["model"]["reply"]["Research Plan and Status"]  # the plan travels in the message's text
    document = result(run_dir)
    assert document["success"] is True and document["demo"] is True
    assert document["reply_format"] == {"declared": "tools", "ran": "tools", "reason": None}
    assert "-> success" in out
    assert trace_problems(run_dir) == []
