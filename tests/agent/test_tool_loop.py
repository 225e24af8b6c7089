"""A tool agent's steps: the conversation it sends, tool calls run and recorded, format errors
as retries, parallel calls off and ordered, the history window keeping calls with their results."""
import json

from agent_helpers import mlab, only_run, result, trace, trace_problems
from tool_helpers import call, use_tools_agent, write_replies

FIT = call("execute_script", {"script_name": "fit.py"})
SUBMIT = call("final_answer", {"final_answer": "fitted y = 2x + 1"})


def run_tools(monkeypatch, tiny_task, tmp_path, replies, *extra, **reply):
    use_tools_agent(monkeypatch, **reply)
    code, out, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, replies),
                          "--runs-dir", tmp_path / "runs", *extra)
    return code, out, err, only_run(tmp_path / "runs")


def test_a_tool_agent_runs_its_calls_and_records_message_call_and_result(monkeypatch, tiny_task, tmp_path):
    replies = [call("list_files", {"dir_path": "."}, content="Reflection: nothing yet\nThought: look around"),
               FIT, SUBMIT]
    code, out, err, run_dir = run_tools(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    first = records[0]["model"]
    assert first["format"] == "tools"
    assert first["message"]["tool_calls"][0]["function"] == {"name": "list_files", "arguments": '{"dir_path": "."}'}
    assert first["tool_call"] == {"id": first["message"]["tool_calls"][0]["id"], "name": "list_files",
                                  "arguments": '{"dir_path": "."}', "index": 0}
    assert first["tool_result"] == {"tool_call_id": first["tool_call"]["id"], "content": records[0]["observation"],
                                    "is_error": False}
    assert first["reply"]["Reflection"] == "nothing yet" and first["reply"]["Thought"] == "look around"
    assert "train.csv" in records[0]["observation"]
    assert trace_problems(run_dir) == []
    document = result(run_dir)
    assert document["success"] is True
    assert document["reply_format"] == {"declared": "tools", "ran": "tools", "reason": None}
