"""Native tool calling in the language: the std tools agents compile to the IR the runtime reads
(reply format "tools", tool names and tools in the action table, the templates of a conversation),
and their templates render with exactly the context spec/template-context.json gives them."""
from __future__ import annotations

import json

import jinja2
import pytest
from jinja2 import meta

from mlabc import cli
from mlabc.program.check import check_program
from mlabc.program.loader import load_program
from mlabc.names import snake_case
from mlabc.resources import std_dir

from mlabc_cases import REPO_ROOT

SPEC = json.loads((REPO_ROOT / "spec" / "template-context.json").read_text())
TOOLS_AGENTS = ("research-tools", "react-tools", "basic-tools")
ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)


@pytest.fixture(scope="module")
def std():
    compiled = check_program(load_program([std_dir() / "agents.mlab", std_dir() / "experiments.mlab"]))
    assert compiled.ok, [d.message for d in compiled.diagnostics]
    return compiled


def test_the_standard_library_checks_clean(capsys):
    assert cli.main(["check", str(std_dir() / "agents.mlab"), str(std_dir() / "experiments.mlab")]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["List Files", "Edit Script (AI)", "Retrieval from Research Log", "  Final--Answer "])
def test_tool_names_are_the_action_names_in_snake_case(name):
    assert snake_case(name) == {"List Files": "list_files", "Edit Script (AI)": "edit_script_ai",
                                "Retrieval from Research Log": "retrieval_from_research_log",
                                "  Final--Answer ": "final_answer"}[name]


def test_research_tools_keeps_the_research_sections_as_text_and_sends_the_actions_as_tools(std):
    agent = std.agents["research-tools"]
    reply = agent.ir["reply"]
    assert reply["format"] == "tools"
    assert [(s["name"], s["role"]) for s in reply["sections"]] == [
        ("Reflection", "reflection"), ("Research Plan and Status", "plan"), ("Fact Check", "fact-check"),
        ("Thought", "thought")]
    assert (reply["sections_required"], reply["tool_choice"], reply["parallel"], reply["list_tools"]) == \
        (True, "required", "off", False)
    fallback = reply["fallback"]
    assert fallback["format"] == "sections"
    assert [s["kind"] for s in fallback["sections"]] == ["text"] * 4 + ["action", "json"]
    assert agent.ir["search"] is None
    shown = [a for a in agent.actions["actions"] if a["shown"]]
    assert {a["tool_name"] for a in shown} >= {"list_files", "edit_script_ai", "final_answer"}
    edit = next(a for a in shown if a["name"] == "Edit Script (AI)")
    assert edit["tool"]["type"] == "function"
    assert edit["tool"]["function"]["name"] == "edit_script_ai"
    assert edit["tool"]["function"]["parameters"] == edit["input_schema"]
    assert edit["tool"]["function"]["description"].endswith("Returns: " + edit["returns"])


@pytest.mark.parametrize("name", TOOLS_AGENTS)
def test_a_tools_agent_has_the_templates_of_a_conversation(std, name):
    agent = std.agents[name]
    assert sorted(agent.ir["templates"]) == sorted(
        ["prompt", "problem", "turn", "format_error", "tools", "reply_format", "fallback_reply_format", "history",
         "understand_file", "understand_file_merge", "edit_script", "edit_script_segment", "summarize_observation",
         "reflection", "retrieve_log", "append_summary"])
    used = meta.find_undeclared_variables(ENV.parse(agent.templates["prompt.j2"]))
    assert used <= set(SPEC["tools_agent_templates"]["prompt"])
    assert not used & {"history", "step", "retrieved"}, "the system prompt is the same at every step"


def _context(template: str) -> dict:
    task = {"name": "t", "title": "T", "problem": "Predict y.", "submission_file": "submission.csv",
            "submission_columns": ["id", "y"], "metric": "mae", "direction": "lower_is_better"}
    actions = [{"name": "List Files", "tool_name": "list_files", "description": "List.", "usage": "{}",
                "returns": "names"}]
    values = {"task": task, "tools": "", "tool_names": ["list_files"], "reply_format": "RF", "max_steps": 9,
              "step": 2, "retrieved": "", "research_log": "", "actions": actions, "format": "tools",
              "sections": [], "error": "bad", "steps": []}
    return {key: values[key] for key in SPEC["tools_agent_templates"].get(template, SPEC["templates"].get(template, {}))
            if key in values}


@pytest.mark.parametrize("name", TOOLS_AGENTS)
def test_a_tools_agent_renders_in_tools_mode_and_in_its_fallback(std, name):
    texts = std.agents[name].templates
    turn = ENV.from_string(texts["turn.j2"]).render(**_context("turn"))
    assert "step 2 of at most 9" in turn
    tools_mode = ENV.from_string(texts["tools.j2"]).render(**_context("tools"), mode="tools")
    assert tools_mode.startswith("- list_files: List.")
    fallback = ENV.from_string(texts["tools.j2"]).render(**_context("tools"), mode="sections")
    assert "Action: List Files" in fallback
    assert "Action Input:" in ENV.from_string(texts["fallback_reply_format.j2"]).render()
    prompt = ENV.from_string(texts["prompt.j2"]).render(**_context("prompt"))
    assert "Tools you can use" not in prompt, "the tools text is empty while tools are sent natively"
    assert "Tools you can use" in ENV.from_string(texts["prompt.j2"]).render(**dict(_context("prompt"), tools="x"))


def test_basic_tools_has_no_text_sections(std):
    reply = std.agents["basic-tools"].ir["reply"]
    assert reply["sections"] == [] and reply["fallback"]["format"] == "sections"
    assert ENV.from_string(std.agents["basic-tools"].templates["reply_format.j2"]).render() == \
        "Call exactly one tool in each reply."


def test_the_research_versus_tools_experiment_pairs_the_two_agents(std):
    ir, _ = std.experiments["research-vs-tools"]
    assert ir["agents"] == ["research", "research-tools"] and ir["runs"] == 8 and ir["tasks"] == {"all": True}


def test_a_text_agent_may_extend_a_tools_agent_and_back(tmp_path):
    source = tmp_path / "mine.mlab"
    source.write_text('use std "agents"\n'
                      'agent plain extends research-tools {\n'
                      '  prompt "{{ tools }} {{ reply_format }} {{ history }} step {{ step }}"\n'
                      '  respond sections {\n    section "Action" action "a"\n    section "Action Input" json "b"\n  }\n}\n'
                      'agent lean-tools extends research-tools {\n  drop section "Fact Check"\n}\n', encoding="utf-8")
    compiled = check_program(load_program([source]))
    assert compiled.ok, [d.message for d in compiled.diagnostics]
    plain, lean = compiled.agents["plain"], compiled.agents["lean-tools"]
    assert plain.ir["reply"]["format"] == "sections" and "turn" not in plain.ir["templates"]
    assert [s["name"] for s in lean.ir["reply"]["sections"]] == ["Reflection", "Research Plan and Status", "Thought"]
    assert lean.ir["reply"]["sections_required"] is True
