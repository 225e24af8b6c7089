"""`mlab export RUN --to atif`: one ATIF-v1.8 trajectory per run, valid for the `atif` package's models."""
import json
import shutil
from pathlib import Path

import pytest

from agent_helpers import mlab
from export_helpers import copy_run, record_problems, records, tool_agent_records, tree_records, write_records
from needs import module

atif = module("atif", "the atif package (a test extra: pip install -e '.[test]')")

V1_RUN = Path(__file__).parent.parent / "agent" / "data" / "runs-v1" / "20261201T182227-d6c232"


def export(run_dir, tmp_path, name="trajectory.json") -> dict:
    out = tmp_path / name
    code, stdout, err = mlab("export", run_dir, "--to", "atif", "-o", out)
    assert code == 0, err
    assert f"wrote {out}: ATIF trajectory (ATIF-v1.8)" in stdout
    document = json.loads(out.read_text())
    atif.Trajectory.model_validate(document)  # the format's own models: the check that matters
    return document


def trace_usage(run_dir) -> tuple[int, int, int]:
    calls = [c for r in records(run_dir) for c in (r.get("model") or {}).get("calls", [])]
    return (sum(c["prompt_tokens"] for c in calls), sum(c["completion_tokens"] for c in calls),
            sum(c.get("cached_tokens", 0) for c in calls))


def test_the_installed_atif_package_models_the_version_written():
    from importlib.metadata import version

    from mlab.export.atif import ATIF_VERSION, KNOWN_VERSIONS

    assert ATIF_VERSION in KNOWN_VERSIONS
    assert ATIF_VERSION == "ATIF-v" + ".".join(version("atif").split(".")[:2])


def test_every_std_agent_run_exports_a_valid_trajectory(std_runs, tmp_path):
    assert {"research", "react", "simple", "autogpt-style", "research-retrieval"} <= set(std_runs)
    # and, as they arrive, the tool agents (native tool calls) and the tree-search agents
    failed = {agent: why for agent, why in std_runs.items() if isinstance(why, str)}
    assert failed == {}, "these std agents' runs failed, so their export is not checked"
    parented = 0  # tree nodes made from a parent (MCTS's fourth node improves a draft)
    for agent, run_dir in std_runs.items():
        document = export(run_dir, tmp_path, f"{agent}.json")
        trace = records(run_dir)
        result = json.loads((run_dir / "result.json").read_text())
        assert document["schema_version"] == "ATIF-v1.8"
        assert document["session_id"] == run_dir.name and document["agent"]["name"] == agent
        steps = document["steps"]
        agent_steps = [s for s in steps if s["source"] == "agent"]
        # one agent step per model reply: a message's calls are one step, however many records they ran in;
        # a record with neither action nor reply (a tree search's closing record) is a system step
        replies = [r for r in trace if (r["action"] is not None or (r["model"] or {}).get("calls"))
                   and ("tool_call" not in (r["model"] or {}) or "message" in r["model"])]
        assert len(agent_steps) == len(replies), agent
        assert sum(len(s["extra"]["trace_steps"]) for s in steps if "trace_steps" in s.get("extra", {})) == len(trace)
        assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
        assert document["final_metrics"]["total_steps"] == len(steps)
        prompt, completion, cached = trace_usage(run_dir)
        final = document["final_metrics"]
        assert (final["total_prompt_tokens"], final["total_completion_tokens"], final["total_cached_tokens"]) == \
            (prompt, completion, cached), agent
        assert sum(s["metrics"]["prompt_tokens"] for s in agent_steps) == prompt
        assert prompt + completion == result["total_tokens"], agent
        for step in agent_steps:
            ids = [call["tool_call_id"] for call in step.get("tool_calls", [])]
            assert [r["source_call_id"] for r in step["observation"]["results"]] == ids
        if "node" in trace[0]:
            assert [s["extra"]["tree"]["node"] for s in agent_steps] == [r["node"] for r in trace if "node" in r]
            assert document["agent"]["extra"]["search"]["policy"] in ("greedy", "mcts", "evolution")
            assert "tool_definitions" not in document["agent"]
            step_of = {s["extra"]["tree"]["node"]: s["step_id"] for s in agent_steps}
            for step in agent_steps:
                tree = step["extra"]["tree"]
                assert tree["parent_step_id"] == (step_of[tree["parent"]] if tree["parent"] else None)
                parented += tree["parent"] is not None
            assert [s["tool_calls"][0]["function_name"] for s in agent_steps] == [r["operator"] for r in trace
                                                                                   if "node" in r]
        else:
            assert agent_steps[-1]["tool_calls"][0]["function_name"] == "final_answer"
        assert document["extra"]["result"]["success"] == result["success"]
    assert parented or not any(a.startswith("tree-") for a in std_runs)


def test_a_text_agent_step_keeps_its_sections_by_role_its_snapshot_and_a_harness_made_call_id(std_runs, tmp_path):
    run_dir = std_runs["research"]
    document = export(run_dir, tmp_path)
    trace = records(run_dir)
    user, first, second = document["steps"][:3]
    assert user["source"] == "user" and user["message"] == trace[0]["model"]["prompt"]
    assert first["message"] == trace[0]["model"]["response"]
    call = first["tool_calls"][0]
    assert (call["tool_call_id"], call["function_name"], call["arguments"]) == ("mlab-step-1", "list_files",
                                                                                {"dir_path": "."})
    assert call["extra"] == {"action": "List Files", "harness_id": True}
    assert first["observation"]["results"][0]["content"] == trace[0]["observation"]
    roles = {s["name"]: s["role"] for s in first["extra"]["sections"]}
    assert roles["Research Plan and Status"] == "plan" and roles["Fact Check"] == "fact-check"
    assert first["reasoning_content"].startswith(f"Reflection: {trace[0]['model']['reply']['Reflection']}")
    assert "Action Input" not in first["reasoning_content"]
    assert "prompt" not in first["extra"]  # the user step holds it
    assert second["extra"]["prompt"] == trace[1]["model"]["prompt"]  # re-rendered with the history
    changed = [s for s in document["steps"] if any(d["changed"] for d in s.get("extra", {}).get("snapshot", []))]
    assert changed and all(len(digest) == 64 for s in changed for d in s["extra"]["snapshot"]
                           for digest in d["changed"].values())
    assert document["agent"]["extra"]["reply_format"] == "sections"
    names = [t["function"]["name"] for t in document["agent"]["tool_definitions"]]
    assert "execute_script" in names and "final_answer" in names
    assert document["extra"]["initial_snapshot"] == json.loads((run_dir / "run.json").read_text())["initial_snapshot"]


def test_without_o_the_trajectory_goes_to_stdout(std_runs):
    code, out, err = mlab("export", std_runs["simple"], "--to", "atif")
    assert code == 0, err
    atif.Trajectory.model_validate(json.loads(out))


def test_a_version_1_run_exports(tmp_path):
    run_dir = shutil.copytree(V1_RUN, tmp_path / "run", ignore=shutil.ignore_patterns("workspace"))
    document = export(run_dir, tmp_path)
    assert document["extra"]["trace_versions"] == [1]
    assert [s["source"] for s in document["steps"]] == ["user", "agent", "agent", "agent"]
    assert document["final_metrics"]["total_prompt_tokens"] == 4497  # result.json of that run
    assert document["notes"].startswith("A demonstration")


def test_a_tool_agents_message_is_one_step_with_its_calls_ids_and_results(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "tools-run")
    write_records(run_dir, tool_agent_records(records(run_dir)))
    assert record_problems(run_dir) == []
    document = export(run_dir, tmp_path)
    system, problem, turn, first, closing, last = document["steps"]
    assert (system["source"], system["message"]) == ("system", "You are a researcher. Use the tools.")
    assert [(s["source"], s["message"]) for s in (problem, turn, closing)] == [
        ("user", "Research problem:\nPredict y from x."), ("user", "This is step 1 of at most 30."),
        ("user", "This is step 3 of at most 30.")]  # each step's closing message, as the model got it
    assert "prompt" not in first["extra"]
    assert first["message"] == "Thought: look, then run the fit."
    assert first["reasoning_content"] == "The files first; then the better model."  # the provider's reasoning
    assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in first["tool_calls"]] == \
        [("call_A1", "list_files", {"dir_path": "."}), ("call_B2", "execute_script", {"script_name": "fit.py"})]
    assert first["tool_calls"][1]["extra"]["arguments_text"] == "{\"script_name\":\"fit.py\"}"
    results = first["observation"]["results"]
    assert [r["source_call_id"] for r in results] == ["call_A1", "call_B2"]
    assert results[1]["content"] == "(summary) wrote 4 predictions"  # the tool result as sent back
    assert results[1]["extra"]["observation"].startswith("wrote 4 predictions")
    assert first["extra"]["trace_steps"] == [1, 2]
    assert first["metrics"] == {"prompt_tokens": 1200, "completion_tokens": 80, "cached_tokens": 1000,
                                "cost_usd": 0.001, "extra": first["metrics"]["extra"]}
    assert last["message"] == "" and last["llm_call_count"] == 2
    assert [c["tool_call_id"] for c in last["tool_calls"]] == ["call_C3", "call_D4"]  # D4 answered, not run
    assert last["observation"]["results"][1] == {"source_call_id": "call_D4", "content": "Not run: one action per step.",
                                                 "extra": {"is_error": True, "trace_step": 3}}
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"], final["total_cached_tokens"],
            final["total_steps"], final["extra"]["trace_records"]) == (3000, 140, 2200, 6, 3)
    assert final["total_cost_usd"] == pytest.approx(0.003)


def test_tree_nodes_keep_their_parents_as_atif_step_ids(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "tree-run")
    write_records(run_dir, tree_records(records(run_dir)))
    assert record_problems(run_dir) == []
    document = export(run_dir, tmp_path)
    nodes = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s["tool_calls"][0]["function_name"] for s in nodes] == ["draft", "draft", "debug", "improve"]
    by_node = {s["extra"]["tree"]["node"]: s for s in nodes}
    assert by_node[3]["extra"]["tree"]["parent_step_id"] == by_node[2]["step_id"]
    assert by_node[4]["extra"]["tree"]["parent_step_id"] == by_node[1]["step_id"]
    assert by_node[1]["extra"]["tree"]["parent_step_id"] is None
    before = document["steps"][by_node[3]["step_id"] - 2]  # each node's own prompt, as a user step before it
    assert (before["source"], before["message"]) == ("user", "operator debug prompt")
    assert (by_node[2]["extra"]["tree"]["buggy"], by_node[4]["extra"]["tree"]["validation"]) == (True, 0.3)
    assert by_node[4]["observation"]["results"][0]["content"] == "output of node 4"
    assert by_node[4]["reasoning_content"] == "plan: plan of node 4"  # the plan; the code is in the message
    assert [s["kind"] for s in by_node[4]["extra"]["sections"]] == ["text", "code"]
    closing = document["steps"][-1]
    assert (closing["source"], closing["extra"]["search"]) == ("system", {"submitted_node": 4,
                                                                          "selected_by": "validation"})
    assert closing["message"].startswith("The search ended")


def test_the_exporter_refuses_a_version_it_does_not_know(std_runs):
    from mlab.errors import UsageError
    from mlab.export.atif import trajectory

    with pytest.raises(UsageError, match="'ATIF-v9.9' is not one this mlab writes; it writes ATIF-v1.8"):
        trajectory(std_runs["simple"], version="ATIF-v9.9")


def test_bad_input_gets_a_clear_message(std_runs, tmp_path):
    run_dir = std_runs["simple"]
    code, _, err = mlab("export", tmp_path / "nowhere", "--to", "atif")
    assert (code, err.strip()) == (1, f"mlab: {tmp_path / 'nowhere'} does not exist; give a run folder (runs/<run-id>)")
    (tmp_path / "empty").mkdir()
    code, _, err = mlab("export", tmp_path / "empty", "--to", "atif")
    assert code == 1 and "is not a run folder (no run.json)" in err and "Traceback" not in err
    torn = copy_run(run_dir, tmp_path / "torn")
    with open(torn / "trace.jsonl", "a") as handle:
        handle.write('{"step": 9, "sta')
    code, _, err = mlab("export", torn, "--to", "atif")
    assert code == 1 and "ends in 16 bytes that are not a complete record (after step 3)" in err
    assert "mlab run --resume" in err and "Traceback" not in err
    existing = tmp_path / "exists.json"
    existing.write_text("keep me")
    code, _, err = mlab("export", run_dir, "--to", "atif", "-o", existing)
    assert code == 2 and "already exists; give a new path (an export never overwrites)" in err
    assert existing.read_text() == "keep me"
    code, _, err = mlab("export", run_dir, "--to", "harbor")
    assert code == 2 and "invalid choice: 'harbor'" in err
    code, _, err = mlab("export", run_dir, std_runs["react"], "--to", "atif")
    assert code == 2 and "exports one run at a time" in err


def test_per_step_scores_and_an_unfinished_run(std_runs, tmp_path):
    run_dir = copy_run(std_runs["research"], tmp_path / "unfinished")
    (run_dir / "result.json").unlink()
    rows = [{"step": n, "score": 8.5 - n, "improvement": n / 10, "success": False} for n in range(4)]
    (run_dir / "scores.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    document = export(run_dir, tmp_path)
    assert (document["extra"]["finished"], document["extra"]["result"]) == (False, None)
    assert document["extra"]["initial_score"]["score"] == 8.5
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    assert [s["extra"]["scores"][0]["score"] for s in agent_steps] == [7.5, 6.5, 5.5]


def test_long_texts_stored_apart_come_back_whole_and_odd_strings_stay_valid_json(std_runs, tmp_path):
    from mlab.snapshots import ObjectStore
    from mlab.trace import store_long_texts

    run_dir = copy_run(std_runs["research"], tmp_path / "long")
    trace = records(run_dir)
    long = "row " * 20_000 + "\udcff end"  # over the stored-apart size, with a lone surrogate (a non-UTF-8 name)
    trace[0]["observation"] = long
    trace[0] = store_long_texts(trace[0], ObjectStore(run_dir / "objects").put_bytes)
    assert trace[0]["stored"]
    write_records(run_dir, trace)
    out = tmp_path / "long.json"
    code, _, err = mlab("export", run_dir, "--to", "atif", "-o", out)
    assert code == 0, err
    document = json.loads(out.read_bytes().decode("utf-8"))  # valid UTF-8
    atif.Trajectory.model_validate(document)
    first = next(s for s in document["steps"] if s["source"] == "agent")
    # whole, with the lone surrogate in its documented form: its escape written out (standard JSON)
    assert first["observation"]["results"][0]["content"] == long.replace("\udcff", "\\udcff")


def test_a_scripted_drive_exports_its_actions_as_calls_without_model_calls(tiny_task, tmp_path):
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"action": "List Files", "input": {"dir_path": "."}},
                                   {"action": "Jump", "input": {}},
                                   {"action": "Final Answer", "input": {"final_answer": "x"}}]))
    code, out, err = mlab("drive", tiny_task, "--actions", actions, "--runs-dir", tmp_path / "runs", "--quiet")
    assert code == 0, err + out
    from agent_helpers import only_run

    run_dir = only_run(tmp_path / "runs")
    document = export(run_dir, tmp_path)
    steps = document["steps"]
    assert [(s["source"], s["llm_call_count"], s["tool_calls"][0]["function_name"], s["extra"]["status"])
            for s in steps] == [("agent", 0, "list_files", "ok"), ("agent", 0, "Jump", "error"),
                                ("agent", 0, "final_answer", "final")]
    assert not any("metrics" in s or "reasoning_content" in s for s in steps)
    assert [s["observation"]["results"][0]["content"] for s in steps] == [r["observation"] for r in records(run_dir)]
    assert steps[1]["tool_calls"][0]["extra"]["action"] == "Jump"  # the unknown action, as it was given
