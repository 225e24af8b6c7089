"""Offline models play tool agents: a resumed run continues a message's remaining calls,
mlab/replay reproduces the tool calls, mlab/demo plays steps as tool calls (and in the fallback
format without tools), mlab/human reads `call` lines."""
import io
import json

from agent_helpers import interrupted_after_first_step, mlab, only_run, result, trace, trace_problems
from tool_helpers import call, use_tools_agent, write_replies

TWO_CALLS = {"content": "Thought: look, then fit",
             "tool_calls": [{"name": "list_files", "arguments": {"dir_path": "."}},
                            {"name": "execute_script", "arguments": {"script_name": "fit.py"}}]}
SUBMIT = call("final_answer", {"final_answer": "fitted"})


def test_a_run_stopped_between_ordered_calls_resumes_with_the_next_call(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch, parallel="ordered")
    model = write_replies(tmp_path, [TWO_CALLS, SUBMIT])
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", model,
                                                "--runs-dir", tmp_path / "runs")
    assert code == 130, err
    run_dir = only_run(tmp_path / "runs")
    assert [r["action"] for r in trace(run_dir)] == ["List Files"]
    code, _, err = mlab("run", "--resume", run_dir)
    assert code == 0, err
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    message = records[0]["model"]["message"]
    assert records[1]["model"]["tool_call"]["id"] == message["tool_calls"][1]["id"]
    assert records[1]["model"]["calls"] == []  # the second call of the message needed no model call
    assert len(records[2]["model"]["calls"]) == 1
    assert result(run_dir)["success"] is True and result(run_dir)["model_calls"] == 2
    assert trace_problems(run_dir) == []


def test_a_resumed_run_sends_the_history_of_the_steps_before_it(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch)
    replies = [call("list_files", {"dir_path": "."}), call("execute_script", {"script_name": "fit.py"}), SUBMIT]
    code, _, _ = interrupted_after_first_step(monkeypatch, tiny_task, "--model", write_replies(tmp_path, replies),
                                              "--runs-dir", tmp_path / "runs")
    assert code == 130
    run_dir = only_run(tmp_path / "runs")
    code, _, err = mlab("run", "--resume", run_dir)
    assert code == 0, err
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "Execute Script", "Final Answer"]
    prompt = trace(run_dir)[1]["model"]["prompt"]  # the conversation the resumed step sent
    first_id = trace(run_dir)[0]["model"]["tool_call"]["id"]
    assert f"-> list_files {{\"dir_path\": \".\"}} [{first_id}]" in prompt and f"[tool ({first_id})]" in prompt


def test_replay_reproduces_a_tool_run_call_for_call(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch, parallel="ordered")
    code, _, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, [TWO_CALLS, SUBMIT]),
                        "--runs-dir", tmp_path / "first")
    assert code == 0, err
    first = only_run(tmp_path / "first")
    code, _, err = mlab("run", tiny_task, "--model", f"mlab/replay:{first}", "--runs-dir", tmp_path / "again")
    assert code == 0, err
    again = only_run(tmp_path / "again")
    calls = [[r["model"]["tool_call"] for r in trace(run)] for run in (first, again)]
    assert calls[0] == calls[1] and len(calls[0]) == 3


def test_the_demo_model_plays_a_tool_agent_as_tool_calls(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch)
    code, out, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path / "runs")
    assert code in (0, 1), err
    records = trace(only_run(tmp_path / "runs"))
    assert [r["model"]["tool_call"]["name"] for r in records] == ["list_files", "execute_script", "final_answer"]
    assert records[0]["model"]["reply"]["Thought"] == "see what the workspace holds"
    assert records[0]["model"]["format_errors"] == []
    code, _, err = mlab("run", tiny_task, "--model", "mlab/demo", "--no-tools", "--runs-dir", tmp_path / "text")
    records = trace(only_run(tmp_path / "text"))
    assert [(r["action"], r["model"]["format"]) for r in records] == [
        ("List Files", "sections"), ("Execute Script", "sections"), ("Final Answer", "sections")]


def test_the_human_model_shows_the_tools_and_reads_a_call(monkeypatch, capsys):
    from mlab.models.offline import OfflineModels

    human = OfflineModels().model("mlab/human")
    tools = [{"type": "function", "function": {"name": "list_files", "description": "List files.",
                                               "parameters": {"properties": {"dir_path": {"type": "string"}}}}}]
    monkeypatch.setattr("sys.stdin", io.StringIO('Thought: look\ncall list_files {"dir_path": "."}\n.\n'))
    message = human.reply_message("main", "step", [{"role": "system", "content": "be careful"},
                                                   {"role": "user", "content": "step 1"}], tools)
    assert message == {"content": "Thought: look", "tool_calls": [{"name": "list_files",
                                                                   "arguments": '{"dir_path": "."}'}]}
    shown = capsys.readouterr().out
    assert "be careful" in shown and 'list_files {"dir_path": {"type": "string"}}' in shown and "List files." in shown


def test_a_scripted_tool_run_counts_tools_and_cached_tokens(monkeypatch, tiny_task, tmp_path):
    use_tools_agent(monkeypatch)
    replies = [call("list_files", {"dir_path": "."}), call("execute_script", {"script_name": "fit.py"}), SUBMIT]
    code, _, err = mlab("run", tiny_task, "--model", write_replies(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    calls = [r["model"]["calls"][0] for r in trace(only_run(tmp_path / "runs"))]
    assert calls[0]["cached_tokens"] == 0 and all(c["cached_tokens"] > 0 for c in calls[1:])
    assert all(c["prompt_tokens"] > 400 for c in calls)  # the tools' schemas are counted
    assert json.loads(calls[0]["message"]["tool_calls"][0]["function"]["arguments"]) == {"dir_path": "."}
