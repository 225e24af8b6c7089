"""Replies that cannot be used: what the model is told, the retry limit, and what the run records."""
from agent_helpers import (interrupted_after_first_step, mlab, only_run, research_reply, result, scripted,
                           trace, trace_problems)

BAD_REPLIES = [
    ("I think I should look around first.", "the reply has no 'Action:', 'Action Input:' line"),
    ("Thought: look\nAction: Lst Files\nAction Input: {\"dir_path\": \".\"}",
     "'Lst Files' is not an action you can use. Did you mean 'List Files'?"),
    ("Thought: look\nAction: List Files\nAction Input: {dir_path: ., oops",
     "the action input is not a valid JSON object"),
    ("Thought: look\nAction: List Files\nAction Input: [\".\"]", "the action input must be a JSON object"),
    ("", "the reply is empty"),
]


def test_each_format_error_is_sent_back_and_the_next_good_reply_is_used(tiny_task, tmp_path):
    replies = [text for text, _ in BAD_REPLIES] + [research_reply("Execute Script", {"script_name": "train.py"}),
                                                   research_reply("Final Answer", {"final_answer": "done"})]
    code, _, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    run_dir = only_run(tmp_path / "runs")
    first = trace(run_dir)[0]
    assert first["action"] == "Execute Script" and first["status"] == "ok"
    errors = first["model"]["format_errors"]
    assert len(errors) == 5
    for (_, expected), error in zip(BAD_REPLIES, errors):
        assert expected in error
    calls = first["model"]["calls"]
    assert [c["response"] for c in calls] == replies[:6]
    # each retry prompt repeats the step's prompt, quotes the bad reply and says what was wrong
    for (bad, expected), call in zip(BAD_REPLIES, calls[1:]):
        assert call["prompt"].startswith(first["model"]["prompt"])
        assert f"Your previous reply was:\n{bad}\n" in call["prompt"]
        assert f"Your last reply could not be used: {expected}" in call["prompt"]
        assert "(for example one of:\nList Files, Copy File" in call["prompt"]
    assert trace_problems(run_dir) == []
    assert result(run_dir)["model_calls"] == 7


def test_too_many_bad_replies_end_the_run_with_a_response_format_error(tiny_task, tmp_path):
    replies = ["Action: Final Answr\nAction Input: {}"] * 6  # the research agent retries 5 times
    code, out, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1, err
    run_dir = only_run(tmp_path / "runs")
    [record] = trace(run_dir)
    assert record["action"] is None and record["status"] == "ended"
    assert record["end_reason"] == "response format error"
    assert len(record["model"]["calls"]) == 6
    document = result(run_dir)
    assert document["failure_mode"] == "response format error"
    assert document["detail"].startswith("no usable reply after 6 attempt(s); last problem: 'Final Answr' is not")
    assert document["score"] is None and document["success"] is False and document["steps"] == 0
    assert "no success (response format error)" in out
    assert trace_problems(run_dir) == []


def test_running_out_of_scripted_replies_ends_the_run_clearly(tiny_task, tmp_path):
    replies = [research_reply("List Files", {"dir_path": "."})]
    code, out, _ = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1
    document = result(only_run(tmp_path / "runs"))
    assert document["failure_mode"] == "model replies exhausted" and document["steps"] == 1
    assert "has no reply left (it had 1; reply 2 was asked for)" in document["detail"]
    assert document["score"] is None and "no submission" in document["submission_problem"]
    assert trace_problems(only_run(tmp_path / "runs")) == []


def test_long_observations_are_summarised_by_the_fast_model_for_the_history(tiny_task, tmp_path):
    replies = [research_reply("Execute Script", {"script_name": "chatty.py"}),  # prints about 7,000 characters
               "SUMMARY: the script printed 100 rows of x.",
               research_reply("Execute Script", {"script_name": "train.py"}),
               research_reply("Final Answer", {"final_answer": "done"})]
    code, _, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    records = trace(only_run(tmp_path / "runs"))
    assert len(records[0]["observation"]) > 5000  # the step itself shows the whole observation
    [summary_call] = [c for c in records[1]["model"]["calls"] if c["purpose"] == "summarize_observation"]
    assert summary_call["tier"] == "fast" and "row 99: xxx" in summary_call["prompt"]
    assert records[1]["model"]["summaries"] == {"1": "SUMMARY: the script printed 100 rows of x."}
    for record in records[1:]:  # the summary stands in for the observation, made once
        assert "SUMMARY: the script printed 100 rows of x." in record["model"]["prompt"]
        assert "row 99: xxx" not in record["model"]["prompt"]
    assert records[2]["model"]["summaries"] == {}
    assert [c["purpose"] for c in records[2]["model"]["calls"]] == ["step"]


def test_an_offline_model_that_cannot_play_is_refused_before_a_run_is_made(tiny_task, tmp_path):
    for model, message in [(f"mlab/scripted:{tmp_path}/missing.json",
                            f"cannot read scripted replies from {tmp_path}/missing.json: No such file or directory"),
                           (f"mlab/replay:{tmp_path}", f"cannot replay {tmp_path}: it has no trace.jsonl"),
                           ("mlab/oracle", "unknown offline model 'mlab/oracle'")]:
        code, out, err = mlab("run", tiny_task, "--model", model, "--runs-dir", tmp_path / "runs")
        assert (code, out) == (2, "")
        assert err.startswith(f"mlab: --model {model}: {message}") and len(err.splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_what_would_change_the_run(tiny_task, tmp_path):
    code, _, err = mlab("run", tiny_task, "--resume", tmp_path, "--model", "mlab/demo")
    assert code == 2 and "do not give TASK, --model" in err
    code, _, err = mlab("run", "--resume", tmp_path / "nowhere")
    assert code == 2 and "no such run folder" in err
    replies = [research_reply("Execute Script", {"script_name": "fit.py"}),
               research_reply("Final Answer", {"final_answer": "done"})]
    assert mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")[0] == 0
    code, _, err = mlab("run", "--resume", only_run(tmp_path / "runs"))
    assert code == 2 and "is finished (it has a result.json)" in err


def test_resume_may_move_a_run_to_another_device_but_changes_nothing_else(tiny_task, tmp_path, monkeypatch):
    import json

    replies = [research_reply("List Files", {"dir_path": "."}), research_reply("Final Answer", {"final_answer": "done"})]
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--model", scripted(tmp_path, replies),
                                                "--runs-dir", tmp_path / "runs", "--device", "0")
    assert code == 130 and "--resume" in err
    run_dir = only_run(tmp_path / "runs")
    code, _, err = mlab("run", "--resume", run_dir, "--data", "full", "--steps", "9", "--seed", "0")
    assert code == 2 and "do not give --data, --seed, --steps" in err
    assert json.loads((run_dir / "run.json").read_text())["device"] == "0"
    code, out, err = mlab("run", "--resume", run_dir, "--device", "1")
    assert code == 1 and "no submission: submission.csv" in result(run_dir)["detail"], out + err  # it wrote none
    assert json.loads((run_dir / "run.json").read_text())["device"] == "1"
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "Final Answer"]


def test_a_helper_model_that_fails_during_an_action_ends_the_run_after_that_step(tiny_task, tmp_path):
    replies = [research_reply("Reflection", {"things_to_reflect_on": "what next"})]  # no reply left for the helper
    code, _, _ = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 1
    run_dir = only_run(tmp_path / "runs")
    acted, ended = trace(run_dir)
    assert acted["action"] == "Reflection" and acted["status"] == "error"
    assert acted["observation"].startswith("the fast model could not be reached: mlab/scripted:")
    assert ended["end_reason"] == "model replies exhausted" and ended["action"] is None
    assert result(run_dir)["failure_mode"] == "model replies exhausted"
    assert trace_problems(run_dir) == []


def test_ctrl_c_before_the_agent_loop_starts_exits_130_without_a_traceback(tiny_task, tmp_path, monkeypatch):
    from mlab.run import create as run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as a Ctrl-C while the run folder is being made

    monkeypatch.setattr(run, "install_run_data", interrupted)
    code, out, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path / "runs")
    assert (code, out, err) == (130, "", "mlab: interrupted\n")
    assert list((tmp_path / "runs").iterdir()) == []  # no half-made run folder is left to confuse a resume
