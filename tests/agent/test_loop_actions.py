"""`mlab run` with scripted replies: every action of the std core set, format errors and the
retry limit, long observations summarised, and a replay that reproduces a run."""
import re

import pytest

from agent_helpers import (actions_taken, mlab, only_run, research_reply, result, scripted, trace,
                           trace_problems)

EDITED_TRAIN = "print('edited by the helper')\n"
SEGMENT_LINE = "import csv  # segment edited\n"

# Every action of the core set, in an order that makes each one meaningful; a helper reply
# follows each model-backed action (all tiers share the scripted file).
ALL_ACTIONS = [
    research_reply("List Files", {"dir_path": "."}),
    research_reply("Read File", {"file_name": "slow.py"}),
    research_reply("Write File", {"file_name": "notes.txt", "content": "first line\n"}),
    research_reply("Append File", {"file_name": "notes.txt", "content": "second line\n"}),
    research_reply("Copy File", {"source": "train.py", "destination": "train_copy.py"}),
    research_reply("Inspect Script Lines", {"script_name": "train.py", "start_line_number": 1,
                                            "end_line_number": 3}),
    research_reply("Understand File", {"file_name": "train.py", "things_to_look_for": "what it writes"}),
    "HELPER: train.py writes submission.csv with the mean of y.",
    research_reply("Edit Script (AI)", {"script_name": "train.py", "edit_instruction": "print a marker",
                                        "save_name": "train.py"}),
    f"Here is the script:\n```python\n{EDITED_TRAIN}```\n",
    research_reply("Undo Edit Script", {"script_name": "train.py"}),
    research_reply("Edit Script Segment (AI)", {"script_name": "train.py", "start_line_number": 1,
                                                "end_line_number": 1, "edit_instruction": "comment the import",
                                                "save_name": "train_segment.py"}),
    f"```python\n{SEGMENT_LINE}```",
    research_reply("Execute Script", {"script_name": "train.py"}),
    research_reply("Reflection", {"things_to_reflect_on": "what to try next"}),
    "HELPER: try a linear model next.",
    research_reply("Append Summary to Research Log", {"content": "baseline measured with train.py"}),
    research_reply("Retrieval from Research Log", {"current_plan": "submit the baseline"}),
    "HELPER: the log says the baseline was measured.",
    research_reply("Final Answer", {"final_answer": "submitted the starter's predictions"}),
]


def without_timings(observation: str) -> str:
    """An observation without the measured time and memory of a script, which vary from run to run."""
    return re.sub(r"\([\d.]+ s wall, [\d.]+ s CPU, peak memory [\d.]+ \w+\)", "(measured)", observation)


@pytest.fixture(scope="module")
def all_actions_run(tiny_task, tmp_path_factory):
    """One run of the research agent through every core action (made once for the module)."""
    folder = tmp_path_factory.mktemp("all-actions")
    code, out, err = mlab("run", tiny_task, "--model", scripted(folder, ALL_ACTIONS), "--runs-dir", folder / "runs")
    assert code == 0, err
    return only_run(folder / "runs"), out


def test_every_core_action_runs_and_its_observation_is_recorded(all_actions_run):
    run_dir, out = all_actions_run
    records = trace(run_dir)
    agent_replies = [reply for reply in ALL_ACTIONS if reply.startswith("Reflection:")]
    assert [r["action"] for r in records] == [reply.split("Action: ")[1].split("\n")[0] for reply in agent_replies]
    assert len({r["resolved"]["primitive"] for r in records}) == 15
    observations = {r["action"]: r["observation"] for r in records}
    assert all(r["status"] in ("ok", "final") for r in records), [(r["action"], r["observation"]) for r in records]
    assert "train.py" in observations["List Files"] and "slow.py" in observations["List Files"]
    assert "time.sleep(1)" in observations["Read File"]
    assert observations["Understand File"] == "HELPER: train.py writes submission.csv with the mean of y."
    assert "+print('edited by the helper')" in observations["Edit Script (AI)"]
    assert "import csv" in observations["Undo Edit Script"]
    assert "+import csv  # segment edited" in observations["Edit Script Segment (AI)"]
    assert "wrote 4 predictions" in observations["Execute Script"]
    assert observations["Reflection"] == "HELPER: try a linear model next."
    assert observations["Retrieval from Research Log"] == "HELPER: the log says the baseline was measured."
    workspace = run_dir / "workspace"
    assert (workspace / "notes.txt").read_text() == "first line\nsecond line\n"
    assert (workspace / "train_copy.py").read_text() == (workspace / "train.py").read_text()
    assert (workspace / "train_segment.py").read_text().startswith(SEGMENT_LINE)
    assert "edited by the helper" not in (workspace / "train.py").read_text()  # undone
    assert "baseline measured with train.py" in (run_dir / "research_log.md").read_text()
    assert trace_problems(run_dir) == []
    assert "run: " in out and "mae: " in out


def test_helper_models_get_their_prompts_from_the_compiled_templates(all_actions_run):
    run_dir, _ = all_actions_run
    calls = {c["purpose"]: c for r in trace(run_dir) for c in r["model"]["calls"] if c["purpose"] != "step"}
    assert set(calls) == {"understand_file", "edit_script", "edit_script_segment", "reflection", "retrieve_log"}
    assert calls["understand_file"]["tier"] == "fast" and "what it writes" in calls["understand_file"]["prompt"]
    assert calls["edit_script"]["tier"] == "edit" and "print a marker" in calls["edit_script"]["prompt"]
    assert "lines 1 to 1" in calls["edit_script_segment"]["prompt"]
    # Reflection sees the recent steps; retrieval sees the research log
    assert "Step 11:" in calls["reflection"]["prompt"] and "what to try next" in calls["reflection"]["prompt"]
    assert "baseline measured with train.py" in calls["retrieve_log"]["prompt"]


def test_the_result_counts_every_call_and_scores_the_submission(all_actions_run):
    run_dir, _ = all_actions_run
    document = result(run_dir)
    assert document["end_reason"] == "final_answer" and document["demo"] is False
    assert document["steps"] == 15 and document["model_calls"] == 20
    assert document["score"] == document["baseline"]["value"] and document["baseline"]["measured"]
    assert document["failure_mode"] == "small improvement" and document["success"] is False
    assert set(document["tokens"]) == {"main", "fast", "edit"} and document["cost"] == 0.0
    assert document["models"]["fast"]["model"].startswith("mlab/scripted:")


def test_replay_of_a_finished_run_takes_the_same_actions(all_actions_run, tiny_task, tmp_path):
    run_dir, _ = all_actions_run
    code, _, err = mlab("run", tiny_task, "--model", f"mlab/replay:{run_dir}", "--runs-dir", tmp_path)
    assert code == 0, err
    replayed = only_run(tmp_path)
    assert actions_taken(replayed) == actions_taken(run_dir)
    assert any("(measured)" in without_timings(r["observation"]) for r in trace(replayed))
    assert [without_timings(r["observation"]) for r in trace(replayed)] == \
        [without_timings(r["observation"]) for r in trace(run_dir)]
    assert result(replayed)["score"] == result(run_dir)["score"]


def test_understand_file_reads_a_long_file_in_chunks_and_merges_the_answers(tiny_task, tmp_path):
    long_text = "".join(f"line {i}: {'y' * 90}\n" for i in range(150))  # about 15,000 characters: two chunks
    replies = [research_reply("Write File", {"file_name": "long.txt", "content": long_text}),
               research_reply("Understand File", {"file_name": "long.txt", "things_to_look_for": "the last line"}),
               "PART ONE: lines 0 to 99.", "PART TWO: the last line is line 149.",
               "MERGED: the file ends with line 149.",
               research_reply("Execute Script", {"script_name": "fit.py"}),
               research_reply("Final Answer", {"final_answer": "done"})]
    code, _, err = mlab("run", tiny_task, "--model", scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 0, err
    understood = trace(only_run(tmp_path / "runs"))[1]
    assert understood["observation"] == "MERGED: the file ends with line 149."
    calls = [c for c in understood["model"]["calls"] if c["purpose"] == "understand_file"]
    assert len(calls) == 3
    assert "part 1\nof 2" in calls[0]["prompt"] and "line 0:" in calls[0]["prompt"]
    assert "part 2\nof 2" in calls[1]["prompt"] and "line 149:" in calls[1]["prompt"]
    assert "PART ONE: lines 0 to 99." in calls[2]["prompt"] and "PART TWO" in calls[2]["prompt"]


def test_mlab_list_shows_tasks_agents_and_experiments():
    code, out, err = mlab("list")
    assert code == 0, err
    assert "tasks:" in out and "agents:" in out and "experiments:" in out
    house = next(line for line in out.splitlines() if line.strip().startswith("house-price"))
    assert "mae" in house and "lite" in house and "2 cpu" in house
    assert "autogpt-style          json" in out and "research-retrieval     sections         shows 11 actions" in out
    assert "tree-greedy            search greedy    evaluates 1 node at once" in out  # a search calls no actions
