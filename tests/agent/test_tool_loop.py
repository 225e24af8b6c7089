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


# -- through an OpenAI-compatible server: what the model is sent --------------------------

import pytest  # noqa: E402

from fake_openai import FakeOpenAI, tool_call  # noqa: E402
from tool_helpers import assert_calls_answered  # noqa: E402

MODEL = "openai/gpt-4o"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MLAB_MODEL_BACKOFF", "0")


def serve(monkeypatch, tiny_task, tmp_path, replies, *extra, fields=None, server_options=None, **reply):
    use_tools_agent(monkeypatch, fields, **reply)
    with FakeOpenAI(replies, **(server_options or {})) as server:
        code, out, err = mlab("run", tiny_task, "--model", MODEL, "--api-base", server.base,
                              "--runs-dir", tmp_path / "runs", *extra)
    return code, err, server.requests, only_run(tmp_path / "runs")


def test_the_conversation_is_system_problem_history_turn_with_the_tools(key, monkeypatch, tiny_task, tmp_path):
    look = tool_call("list_files", {"dir_path": "."}, "call_a", content="Thought: look")
    look["reasoning_content"] = "the provider's reasoning, to be echoed back"
    replies = [look, tool_call("execute_script", {"script_name": "fit.py"}, "call_b"),
               tool_call("final_answer", {"final_answer": "done"}, "call_c")]
    code, err, requests, run_dir = serve(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    assert len(requests) == 3
    systems = {json.dumps(r["messages"][0]) for r in requests}
    assert len(systems) == 1  # the system message is the same at every step (a cacheable prefix)
    third = requests[2]["messages"]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "tool", "assistant", "tool", "user"]
    assert third[1]["content"].startswith("Research problem:\nPredict y from x.")
    assert third[2]["tool_calls"][0]["id"] == "call_a" and third[2]["content"] == "Thought: look"
    assert third[2]["reasoning_content"] == "the provider's reasoning, to be echoed back"
    assert third[3] == {"role": "tool", "tool_call_id": "call_a", "content": trace(run_dir)[0]["observation"]}
    # a message of calls alone goes back with empty text, not null (llama.cpp's server refuses null)
    assert third[4]["tool_calls"][0]["id"] == "call_b" and third[4]["content"] == ""
    assert third[-1]["content"] == "This is step 3 of at most 30."
    assert_calls_answered(third)
    for request in requests:
        names = [t["function"]["name"] for t in request["tools"]]
        assert {"list_files", "execute_script", "final_answer"} <= set(names) and len(names) == len(set(names))
        assert request["tool_choice"] == "required" and request["parallel_tool_calls"] is False
    assert "Tools:" not in third[0]["content"]  # the tools go natively, not in the prompt text
    # the earlier prompts' messages are a prefix of the later ones but for the turn
    assert requests[1]["messages"][:-1] == third[:4]


def test_the_sliding_window_keeps_each_call_with_its_result(key, monkeypatch, tiny_task, tmp_path):
    two = tool_call("list_files", {"dir_path": "."}, "call_2a", more=[("execute_script", {"script_name": "train.py"},
                                                                        "call_2b")])
    replies = [tool_call("list_files", {"dir_path": "."}, "call_1"), two,
               tool_call("execute_script", {"script_name": "fit.py"}, "call_3"),
               tool_call("final_answer", {"final_answer": "done"}, "call_4")]
    code, err, requests, run_dir = serve(monkeypatch, tiny_task, tmp_path, replies, fields={"history_steps": 2},
                                         parallel="ordered")
    assert code == 0, err
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "List Files", "Execute Script", "Execute Script",
                                                     "Final Answer"]
    for request in requests:
        assert_calls_answered(request["messages"])
    # at the third request the window (2 records) holds the two-call message whole, not step 1
    third = requests[2]["messages"]
    assert [m.get("tool_call_id") for m in third if m["role"] == "tool"] == ["call_2a", "call_2b"]
    # at the fourth the two-call message no longer fits beside step 3's: it leaves whole
    fourth = requests[3]["messages"]
    assert [m.get("tool_call_id") for m in fourth if m["role"] == "tool"] == ["call_3"]
    assert "parallel_tool_calls" not in requests[0]  # ordered: several calls are welcome
    second = trace(run_dir)[2]["model"]
    assert second["tool_call"]["index"] == 1 and "message" not in second and second["format"] == "tools"


def test_parallel_off_runs_the_first_call_and_answers_the_others(key, monkeypatch, tiny_task, tmp_path):
    two = tool_call("execute_script", {"script_name": "fit.py"}, "call_x", more=[("list_files", {"dir_path": "."},
                                                                                  "call_y")])
    replies = [two, tool_call("final_answer", {"final_answer": "done"}, "call_z")]
    code, err, requests, run_dir = serve(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    assert [r["action"] for r in trace(run_dir)] == ["Execute Script", "Final Answer"]
    second = requests[1]["messages"]
    assert_calls_answered(second)
    answer = next(m for m in second if m.get("tool_call_id") == "call_y")
    assert answer["content"].startswith("Not run: this agent takes one action per step")
    assert trace(run_dir)[0]["model"]["other_results"][0]["tool_call_id"] == "call_y"
    assert trace_problems(run_dir) == []


def test_a_hidden_action_is_not_offered_as_a_tool_but_can_be_called(key, monkeypatch, tiny_task, tmp_path):
    replies = [tool_call("read_file", {"file_name": "train.py"}, "call_r"),
               tool_call("execute_script", {"script_name": "fit.py"}, "call_e"),
               tool_call("final_answer", {"final_answer": "done"}, "call_f")]
    code, err, requests, run_dir = serve(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    assert "read_file" not in [t["function"]["name"] for t in requests[0]["tools"]]
    first = trace(run_dir)[0]
    assert first["action"] == "Read File" and first["status"] == "ok" and "import csv" in first["observation"]


def test_long_results_are_summarised_and_failed_actions_flagged(monkeypatch, tiny_task, tmp_path):
    replies = [call("execute_script", {"script_name": "chatty.py"}), "SUMMARY: a hundred rows of x",
               call("execute_script", {"script_name": "missing.py"}), FIT, SUBMIT]
    use_tools_agent(monkeypatch, {"summarize_over_chars": 500})
    code, _, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    records = trace(only_run(tmp_path / "runs"))
    assert [r["action"] for r in records] == ["Execute Script"] * 3 + ["Final Answer"]
    second = records[1]["model"]
    assert [c["purpose"] for c in second["calls"]] == ["summarize_observation", "step"]
    assert "[tool (" + records[0]["model"]["tool_call"]["id"] + ")]\nSUMMARY: a hundred rows of x" in second["prompt"]
    assert "row 99" not in second["prompt"]
    assert records[1]["model"]["tool_result"]["is_error"] is True  # the missing script
    assert records[0]["model"]["tool_result"]["is_error"] is False


def test_the_research_log_hooks_work_for_a_tool_agent(monkeypatch, tiny_task, tmp_path):
    replies = [FIT, "Step 1 ran fit.py: it writes the exact line.", "fit.py is the model to submit", SUBMIT]
    use_tools_agent(monkeypatch)
    code, _, err = mlab("run", tiny_task, "--agent", "research-retrieval", "--model", write_replies(tmp_path, replies),
                        "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    second = trace(run_dir)[1]
    assert [c["purpose"] for c in second["model"]["calls"]] == ["append_summary", "retrieve_log", "step"]
    assert second["hooks"] == {"retrieved": "fit.py is the model to submit"}
    assert second["model"]["prompt"].rstrip().endswith("This is step 2 of at most 30.\nFrom your log:\n"
                                                       "fit.py is the model to submit")
    assert "Step 1 ran fit.py" in (run_dir / "research_log.md").read_text()


def test_a_long_write_is_stored_apart_and_echoed_back_shortened(key, monkeypatch, tiny_task, tmp_path):
    content = "# filler\n" * 30_000  # 270,000 characters
    replies = [tool_call("write_file", {"file_name": "notes.py", "content": content}, "call_w"),
               tool_call("execute_script", {"script_name": "fit.py"}, "call_e"),
               tool_call("final_answer", {"final_answer": "done"}, "call_f")]
    code, err, requests, run_dir = serve(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    assert (run_dir / "workspace" / "notes.py").read_text() == content
    echoed = requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    arguments = json.loads(echoed)
    assert arguments["file_name"] == "notes.py" and len(echoed) < 10_000
    assert "characters not shown here" in arguments["content"]
    assert len(json.dumps(requests[1])) < 40_000
    assert trace_problems(run_dir) == []


def test_the_reflection_action_of_a_tool_agent_sees_the_recent_steps(monkeypatch, tiny_task, tmp_path):
    replies = [FIT, call("reflection", {"things_to_reflect_on": "what worked"}), "fit.py worked", SUBMIT]
    code, _, err, run_dir = run_tools(monkeypatch, tiny_task, tmp_path, replies)
    assert code == 0, err
    second = trace(run_dir)[1]
    assert second["action"] == "Reflection" and second["observation"] == "fit.py worked"
    [asked] = [c for c in second["model"]["calls"] if c["purpose"] == "reflection"]
    assert "Action: Execute Script\nAction Input: {\"script_name\": \"fit.py\"}" in asked["prompt"]
