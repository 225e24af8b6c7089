"""Tool-agent replies that cannot be run — no call, an unknown tool, arguments that are not JSON,
huge or do not fit the schema, a call without an id — are answered with the format-error text and
asked again (a retry, as for text agents), never a traceback."""
import json

import pytest

from agent_helpers import mlab, only_run, result, trace, trace_problems
from fake_openai import FakeOpenAI, tool_call
from tool_helpers import assert_calls_answered, use_tools_agent

MODEL = "openai/gpt-4o"
GOOD = tool_call("execute_script", {"script_name": "fit.py"}, "call_ok")
SUBMIT = tool_call("final_answer", {"final_answer": "done"}, "call_end")
# (reply, what the error says, whether it is answered as a tool result or as a user message)
BAD = [
    ({"content": "I will look around first."}, "the reply makes no tool call", "user"),
    (tool_call("lst_files", {"dir_path": "."}, "call_1"), "'lst_files' is not a tool you can use. Did you mean "
                                                          "'list_files'?", "tool"),
    (tool_call("list_files", "{dir_path: ., oops", "call_2"), "the action input is not a valid JSON object", "tool"),
    (tool_call("list_files", '["."]', "call_3"), "the arguments of list_files must be a JSON object", "tool"),
    (tool_call("execute_script", {}, "call_4"), "the arguments of execute_script do not fit its parameters", "tool"),
    (tool_call("list_files", {"dir_path": "."}, ""), "a tool call of the reply has no id", "user"),
    (tool_call("list_files", '"' + "x" * 1_500_000, "call_6"), "the action input is not a valid JSON object", "tool"),
    (tool_call("list_files", {"dir_path": "."}, "call_7", more=[("list_files", {"dir_path": "."}, "call_7")]),
     "two tool calls of the reply have the same id", "user"),
]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")


def run_served(monkeypatch, tiny_task, tmp_path, replies, retries):
    use_tools_agent(monkeypatch, {"format_retries": retries})
    with FakeOpenAI(replies) as server:
        code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs")
    return code, out, err, server.requests, only_run(tmp_path / "runs")


def test_each_unusable_reply_is_answered_with_the_format_error_and_retried(key, monkeypatch, tiny_task, tmp_path):
    replies = [reply for reply, _, _ in BAD] + [GOOD, SUBMIT]
    code, _, err, requests, run_dir = run_served(monkeypatch, tiny_task, tmp_path, replies, len(BAD))
    assert code == 0, err
    assert "Traceback" not in err
    first = trace(run_dir)[0]
    assert first["action"] == "Execute Script" and first["status"] == "ok"
    errors = first["model"]["format_errors"]
    assert len(errors) == len(BAD)
    for (_, expected, _), error in zip(BAD, errors):
        assert expected in error
    assert len(first["model"]["calls"]) == len(BAD) + 1
    for (_, expected, answered_as), request in zip(BAD, requests[1:]):
        messages = request["messages"]
        assert_calls_answered(messages)
        last = messages[-1]
        assert last["role"] == answered_as
        assert "Your last reply could not be used: " + expected in last["content"]
        for message in messages:  # whatever the model sent, what goes back is valid JSON arguments
            for made in message.get("tool_calls") or []:
                assert isinstance(json.loads(made["function"]["arguments"]), dict)
    # the retries stay in the step: the next step's history holds only the reply that ran
    history = requests[len(BAD) + 1]["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool", "user"]
    assert history[2]["tool_calls"][0]["id"] == "call_ok"
    assert trace_problems(run_dir) == []
    assert result(run_dir)["success"] is True


def test_a_call_the_server_sends_without_an_id_gets_one_and_runs(key, monkeypatch, tiny_task, tmp_path):
    replies = [tool_call("execute_script", {"script_name": "fit.py"}, None), SUBMIT]
    code, _, err, requests, run_dir = run_served(monkeypatch, tiny_task, tmp_path, replies, 0)
    assert code == 0, err
    made = trace(run_dir)[0]["model"]["tool_call"]["id"]  # litellm names a call the server left unnamed
    assert made and requests[1]["messages"][3] == {"role": "tool", "tool_call_id": made,
                                                   "content": trace(run_dir)[0]["observation"]}


def test_too_many_unusable_replies_end_the_run_with_a_response_format_error(key, monkeypatch, tiny_task, tmp_path):
    replies = [tool_call("lst_files", {"dir_path": "."}, f"call_{i}") for i in range(3)]
    code, out, err, requests, run_dir = run_served(monkeypatch, tiny_task, tmp_path, replies, 2)
    assert code == 1 and "Traceback" not in err
    [record] = trace(run_dir)
    assert record["end_reason"] == "response format error" and record["action"] is None
    document = result(run_dir)
    assert document["failure_mode"] == "response format error"
    assert document["detail"].startswith("no usable reply after 3 attempt(s); last problem: 'lst_files' is not a tool")
    assert trace_problems(run_dir) == []


def test_missing_text_sections_are_a_format_error_when_required(key, monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch, sections_required=True)
    full = "Reflection: none\nResearch Plan and Status: run\nFact Check: none\nThought: run it"
    replies = [tool_call("execute_script", {"script_name": "fit.py"}, "call_1", content="Thought: run it"),
               tool_call("execute_script", {"script_name": "fit.py"}, "call_2", content=full),
               tool_call("final_answer", {"final_answer": "done"}, "call_3", content=full)]
    with FakeOpenAI(replies) as server:
        code, _, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                            "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    first = trace(only_run(tmp_path / "runs"))[0]
    assert first["model"]["format_errors"] == [
        "the reply's text has no 'Reflection:', 'Research Plan and Status:', 'Fact Check:' section; write every "
        "section before the tool call"]
    assert first["model"]["reply"]["Research Plan and Status"] == "run"
    retry = server.requests[1]["messages"]
    assert retry[-1]["role"] == "tool" and retry[-1]["tool_call_id"] == "call_1"
