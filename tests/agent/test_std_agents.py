"""Every agent of the standard library runs to a Final Answer with replies in its own format."""
import pytest

from agent_helpers import (interrupted_after_first_step, json_reply, mlab, only_run, result, scripted,
                           sections_reply, trace, trace_problems)

RESEARCH = ["Reflection", "Research Plan and Status", "Fact Check", "Thought"]
SECTION_AGENTS = {  # agent: its text sections, before Action and Action Input
    "research": RESEARCH,
    "research-no-fact-check": ["Reflection", "Research Plan and Status", "Thought"],
    "research-no-plan": ["Reflection", "Fact Check", "Thought"],
    "react": ["Thought"],
    "zero-shot-react": ["Thought"],
    "simple": [],
}
RUN_THEN_SUBMIT = [("Execute Script", {"script_name": "fit.py"}),
                   ("Final Answer", {"final_answer": "fitted y = 2x + 1"})]


def run_agent(tiny_task, folder, agent, replies):
    code, out, err = mlab("run", tiny_task, "--agent", agent, "--model", scripted(folder, replies),
                          "--runs-dir", folder / "runs")
    assert code == 0, err + out
    run_dir = only_run(folder / "runs")
    assert trace_problems(run_dir) == []
    return run_dir


@pytest.mark.parametrize("agent", sorted(SECTION_AGENTS))
def test_a_sections_agent_runs_to_a_final_answer(agent, tiny_task, tmp_path):
    sections = SECTION_AGENTS[agent]
    run_dir = run_agent(tiny_task, tmp_path, agent, [sections_reply(sections, *step) for step in RUN_THEN_SUBMIT])
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["Execute Script", "Final Answer"]
    assert list(records[0]["model"]["reply"]) == sections + ["Action", "Action Input"]
    if sections:
        assert f"{sections[0]}: some {sections[0].lower()}" in records[1]["model"]["prompt"]  # in the history
    document = result(run_dir)
    assert (document["agent"], document["end_reason"], document["success"]) == (agent, "final_answer", True)
    assert document["score"] == 0.0 and document["improvement"] == 1.0


def test_the_autogpt_style_agent_replies_with_one_json_object(tiny_task, tmp_path):
    run_dir = run_agent(tiny_task, tmp_path, "autogpt-style", [json_reply(*step) for step in RUN_THEN_SUBMIT])
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["Execute Script", "Final Answer"]
    assert records[0]["model"]["reply"]["thoughts.plan"] == "- look"
    assert records[0]["model"]["reply"]["command.args"] == '{"script_name": "fit.py"}'
    assert "Reply with exactly one JSON object" in records[0]["model"]["prompt"]
    assert result(run_dir)["success"] is True


def test_research_retrieval_keeps_a_research_log_and_shows_what_it_retrieves(tiny_task, tmp_path):
    replies = [sections_reply(RESEARCH, *RUN_THEN_SUBMIT[0]),
               "LOG: ran fit.py; it wrote 4 predictions.",           # after step 1: its log entry
               "RETRIEVED: fit.py has been run and wrote the submission.",  # before step 2
               sections_reply(RESEARCH, *RUN_THEN_SUBMIT[1])]
    run_dir = run_agent(tiny_task, tmp_path, "research-retrieval", replies)
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["Execute Script", "Final Answer"]
    assert (run_dir / "research_log.md").read_text() == "Step 1:\nLOG: ran fit.py; it wrote 4 predictions.\n"
    assert records[1]["research_log"] == "Step 1:\nLOG: ran fit.py; it wrote 4 predictions.\n"
    calls = records[1]["model"]["calls"]
    assert [(c["purpose"], c["tier"]) for c in calls] == [("append_summary", "fast"), ("retrieve_log", "fast"),
                                                          ("step", "main")]
    assert "wrote 4 predictions" in calls[0]["prompt"]  # the summary is of step 1's observation
    assert "LOG: ran fit.py" in calls[1]["prompt"]  # retrieval reads the log
    prompt = records[1]["model"]["prompt"]
    assert "From your research log, what bears on the work now:\n" \
           "RETRIEVED: fit.py has been run and wrote the submission." in prompt
    assert records[1]["hooks"] == {"retrieved": "RETRIEVED: fit.py has been run and wrote the submission."}
    assert "- Retrieval from Research Log:" in records[0]["model"]["prompt"]  # its log tools are shown
    assert result(run_dir)["model_calls"] == 4


def test_research_retrieval_resumed_between_steps_makes_each_log_entry_once(tiny_task, tmp_path, monkeypatch):
    replies = [sections_reply(RESEARCH, "List Files", {"dir_path": "."}), "LOG: one.", "RETRIEVED: one.",
               sections_reply(RESEARCH, *RUN_THEN_SUBMIT[0]), "LOG: two.", "RETRIEVED: two.",
               sections_reply(RESEARCH, *RUN_THEN_SUBMIT[1])]
    code, _, err = interrupted_after_first_step(monkeypatch, tiny_task, "--agent", "research-retrieval", "--model",
                                                scripted(tmp_path, replies), "--runs-dir", tmp_path / "runs")
    assert code == 130 and "--resume" in err
    run_dir = only_run(tmp_path / "runs")
    assert len(trace(run_dir)) == 1
    code, _, err = mlab("run", "--resume", run_dir)
    assert code == 0, err
    records = trace(run_dir)
    assert [r["action"] for r in records] == ["List Files", "Execute Script", "Final Answer"]
    assert (run_dir / "research_log.md").read_text() == "Step 1:\nLOG: one.\nStep 2:\nLOG: two.\n"
    assert [c["response"] for r in records for c in r["model"]["calls"]] == replies
    assert records[2]["hooks"] == {"retrieved": "RETRIEVED: two."}
