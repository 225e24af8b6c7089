"""A tool agent without tools: the declared fallback format runs when asked for (--no-tools) or
when the server refuses the tools field, and result.json says which format ran and why."""
import pytest

from agent_helpers import mlab, only_run, research_reply, result, trace, trace_problems
from fake_openai import FakeOpenAI
from tool_helpers import use_tools_agent, write_replies

MODEL = "openai/gpt-4o"
TEXT_REPLIES = [research_reply("Execute Script", {"script_name": "fit.py"}),
                research_reply("Final Answer", {"final_answer": "fitted"})]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")


def test_a_server_that_refuses_tools_gets_the_fallback_format(key, monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch)
    with FakeOpenAI(TEXT_REPLIES, refuse_tools=True) as server:
        code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    requests = server.requests
    assert "tools" in requests[0] and all("tools" not in r for r in requests[1:])
    assert len(requests) == 3  # the refused request, then one per step
    second = requests[2]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "user"]
    assert "Tools:\n" in second[0]["content"] and "Action Input:" in second[0]["content"]  # tools and format as text
    assert "Execute Script" in second[2]["content"]  # the history as text before the turn
    run_dir = only_run(tmp_path / "runs")
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["Execute Script", "Final Answer"]
    assert records[0]["model"]["format"] == "sections" and "tool_call" not in records[0]["model"]
    reply_format = result(run_dir)["reply_format"]
    assert (reply_format["declared"], reply_format["ran"]) == ("tools", "sections")
    assert reply_format["reason"].startswith("the server refused tools: openai/gpt-4o at ")
    assert "tools are not supported by this server" in reply_format["reason"]
    assert result(run_dir)["success"] is True
    assert trace_problems(run_dir) == []


def test_no_tools_runs_the_fallback_and_says_it_was_asked_for(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch)
    code, _, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, TEXT_REPLIES), "--no-tools",
                        "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    assert result(run_dir)["reply_format"] == {"declared": "tools", "ran": "sections",
                                               "reason": "asked for with --no-tools"}
    assert [r["model"]["format"] for r in trace(run_dir)] == ["sections", "sections"]


def test_no_tools_for_an_agent_without_a_fallback_is_refused_before_the_run(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch, fallback=None)
    code, out, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, TEXT_REPLIES), "--no-tools",
                          "--runs-dir", tmp_path / "runs")
    assert code == 2
    assert "--no-tools: agent research declares no fallback format" in err
    assert not (tmp_path / "runs").exists()


def test_a_refusal_without_a_fallback_ends_the_run_with_a_model_api_failure(key, monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch, fallback=None)
    with FakeOpenAI(TEXT_REPLIES, refuse_tools=True) as server:
        code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    assert code == 1 and "Traceback" not in err
    document = result(only_run(tmp_path / "runs"))
    assert document["failure_mode"] == "model API failure"
    assert "declares no fallback format to run without tools" in document["detail"]


def test_a_text_agent_records_its_format_as_declared_and_ran(tiny_task, tmp_path):
    code, _, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, TEXT_REPLIES),
                        "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    assert result(only_run(tmp_path / "runs"))["reply_format"] == {"declared": "sections", "ran": "sections",
                                                                   "reason": None}


def test_a_refusal_in_mid_run_continues_in_the_fallback_with_the_tool_steps_as_text(key, monkeypatch, tiny_task,
                                                                                   tmp_path):
    from fake_openai import tool_call

    use_tools_agent(monkeypatch)
    replies = [tool_call("execute_script", {"script_name": "fit.py"}, "call_1"),
               research_reply("Final Answer", {"final_answer": "fitted"})]
    with FakeOpenAI(replies, refuse_tools=1) as server:
        code, _, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                            "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    assert [r["model"]["format"] for r in trace(run_dir)] == ["tools", "sections"]
    last = server.requests[-1]["messages"]
    assert "Action: Execute Script\nAction Input: {\"script_name\": \"fit.py\"}" in last[-1]["content"]
    reply_format = result(run_dir)["reply_format"]
    assert (reply_format["ran"], reply_format["reason"][:26]) == ("sections", "the server refused tools: ")
