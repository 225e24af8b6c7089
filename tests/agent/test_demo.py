"""The keyless demonstration: `mlab run house-price --model mlab/demo` end to end, labelled as such."""
import pytest

from agent_helpers import mlab, only_run, result, trace, trace_problems


def test_the_house_price_demonstration_is_scored_and_labelled(tmp_path):
    code, out, err = mlab("run", "house-price", "--model", "mlab/demo", "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    document = result(run_dir)
    assert (document["task"], document["metric"], document["direction"]) == ("house-price", "mae", "lower_is_better")
    assert document["demo"] is True and document["end_reason"] == "final_answer"
    baseline = document["baseline"]
    assert baseline["kind"] == "run" and baseline["measured"] is True and baseline["script"] == "train.py"
    assert 0 < document["score"] < baseline["value"]
    assert document["improvement"] == pytest.approx((baseline["value"] - document["score"]) / baseline["value"])
    assert document["success"] is True and document["failure_mode"] is None
    assert document["models"]["main"] == {"model": "mlab/demo", "params": {}, "source": "option"}
    assert {tier["source"] for name, tier in document["models"].items() if name != "main"} == {"main"}
    assert document["schema_version"] == 5 and document["scoring_s"] > 0 and document["agent_kind"] == "linear"
    from mlab.sandbox.runner import sandbox_available

    usable, reason = sandbox_available()  # its two scripts ran in bubblewrap where it works here
    assert document["sandbox"] == {"sandboxed": usable, "scripts": 2, "unsandboxed_scripts": 0 if usable else 2,
                                   "reason": reason}
    assert document["provenance"]["litellm_version"] and document["provenance"]["build_digest"]
    lines = out.splitlines()
    assert "DEMONSTRATION by the keyless demo model (not an agent result)" in lines[0]
    assert "DEMONSTRATION by the keyless demo model — not an agent result" in lines
    assert f"mae: {document['score']:.6g} (baseline {baseline['value']:.6g}, " \
           f"improvement {document['improvement']:+.1%}, threshold 10%) -> success" in lines
    assert f"s agent + {document['scoring_s']:.1f}s scoring, " in out
    assert lines[-2:] == [f"result: {run_dir / 'result.json'}",
                          f"next: mlab view {run_dir}  (writes {run_dir / 'view.html'}, the run step by step)"]
    assert "scoring the submission..." in err
    helper_replies = [c["response"] for r in trace(run_dir) for c in r["model"]["calls"] if c["tier"] != "main"]
    assert all(reply.startswith("(demo model") for reply in helper_replies)
    assert trace_problems(run_dir) == []


def test_a_task_without_a_demonstration_lists_runs_the_starter_and_submits(tiny_task, tmp_path):
    code, out, err = mlab("run", tiny_task, "--model", "mlab/demo", "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    assert [r["action"] for r in trace(run_dir)] == ["List Files", "Execute Script", "Final Answer"]
    document = result(run_dir)
    assert document["demo"] is True and document["score"] == document["baseline"]["value"]
    assert "DEMONSTRATION" in out.splitlines()[0]


# -- version-2 demonstrations: one file, any agent -------------------------------------------------

import json
from pathlib import Path

from mlab.agent.replies import parse_reply
from mlab.models.demonstration import DemonstrationError, check_playable, load, parse
from mlab.models.offline import NEUTRAL_TEXT, fallback_demo, render_step

TASKS = Path(__file__).resolve().parents[2] / "tasks"
HOUSE_DEMO = TASKS / "house-price" / "demo.json"
TEXT_AGENTS = ["research", "react", "simple", "autogpt-style", "zero-shot-react", "research-no-fact-check",
               "research-no-plan"]


def _agent(name):
    from mlab.build import resolve_task

    return resolve_task("house-price", None).build.agent(name)


@pytest.mark.parametrize("agent", TEXT_AGENTS)
def test_every_step_renders_to_a_valid_reply_of_every_std_text_agent(agent):
    view, actions = _agent(agent).view, [a.name for a in _agent(agent).actions.actions]
    demonstration = load(HOUSE_DEMO)
    check_playable(demonstration, actions, agent, str(HOUSE_DEMO))
    for step in demonstration.steps + fallback_demo("train.py").steps:
        parsed = parse_reply(render_step(step, view.reply), view.reply, actions)
        assert (parsed.action, parsed.action_input) == (step.action, step.input)
        for section in view.reply.sections:
            if section.kind == "text":
                expected = step.sections.get(section.role or "", "").strip() or NEUTRAL_TEXT
                assert parsed.sections[section.name] == expected, (agent, section.name)


# End to end, one agent per kind of reply besides research (the test above): another section
# layout with its own prompt, the JSON format, LangChain's loop. Every other std text agent's
# replies are checked step by step by test_every_step_renders_to_a_valid_reply_of_every_std_text_agent,
# and the two section-dropping ablations change nothing a run would do differently.
END_TO_END = ["simple", "autogpt-style", "zero-shot-react"]


@pytest.mark.parametrize("agent", END_TO_END)
def test_the_same_house_price_demonstration_wins_under_each_std_text_agent(agent, tmp_path):
    code, out, err = mlab("run", "house-price", "--model", "mlab/demo", "--agent", agent, "--runs-dir", tmp_path)
    assert code == 0, err
    run_dir = only_run(tmp_path)
    steps = json.loads(HOUSE_DEMO.read_text())["steps"]
    assert [r["action"] for r in trace(run_dir)] == [s["action"] for s in steps]
    document = result(run_dir)
    assert document["agent"] == agent and document["end_reason"] == "final_answer" and document["success"] is True


def _demos():
    return sorted(p for p in TASKS.glob("*/demo.json") if isinstance(json.loads(p.read_text()), dict))


@pytest.mark.parametrize("demo", _demos(), ids=lambda p: p.parent.name)
def test_the_reference_solution_is_what_the_demonstration_writes(demo):
    demonstration = load(demo)
    assert demonstration.solution, f"{demo}: no \"solution\" named"
    reference = demo.parent / "solution" / demonstration.solution
    assert reference.is_file(), f"{reference} is missing"
    assert demonstration.written(demonstration.solution) == reference.read_text(encoding="utf-8"), \
        f"{reference} differs from the last Write File of {demonstration.solution} in {demo}"


def test_a_json_agent_gets_one_object_with_its_dotted_fields():
    step = parse({"format": "mlab-demonstration", "version": 2, "steps": [
        {"sections": {"thought": "t", "plan": "p"}, "action": "List Files", "input": {"dir_path": "."}}]}, "x").steps[0]
    document = json.loads(render_step(step, _agent("autogpt-style").view.reply))
    assert document["command"] == {"name": "List Files", "args": {"dir_path": "."}}
    assert document["thoughts"]["text"] == "t" and document["thoughts"]["plan"] == "p"
    assert document["thoughts"]["reasoning"] == NEUTRAL_TEXT  # a section without a role


@pytest.mark.parametrize(("document", "message"), [
    ({"format": "mlab-demonstration", "version": 3, "steps": []}, "version 3 is not supported"),
    ({"format": "mlab-demonstration", "version": 2, "steps": []}, "non-empty list"),
    ({"format": "mlab-demonstration", "version": 2, "steps": [{"action": "List Files"}, {"input": {}}]},
     "demo.json: step 2 has no \"action\" name"),
    ({"format": "mlab-demonstration", "version": 2, "steps": [{"action": "A", "sections": {"mood": "x"}}]},
     "step 1 \\(A\\): unknown section role\\(s\\) mood"),
    ({"format": "mlab-demonstration", "version": 2, "steps": [{"action": "A", "input": "x"}]}, "must be an object"),
    ({"replies": []}, "not a demonstration"),
])
def test_a_malformed_demonstration_names_the_file_and_the_step(document, message):
    with pytest.raises(DemonstrationError, match=message):
        parse(document, "tasks/t/demo.json")


def test_an_action_the_agent_lacks_is_refused_before_the_run():
    demonstration = parse({"format": "mlab-demonstration", "version": 2,
                           "steps": [{"action": "Frobnicate", "input": {}}]}, "demo.json")
    with pytest.raises(DemonstrationError, match="step 1 uses the action 'Frobnicate', which agent react"):
        check_playable(demonstration, [a.name for a in _agent("react").actions.actions], "react", "demo.json")


def test_a_version_1_reply_list_still_plays_as_written():
    demonstration = parse(["Action: List Files\nAction Input: {}"], "demo.json")
    assert demonstration.version == 1 and demonstration.replies == ("Action: List Files\nAction Input: {}",)
