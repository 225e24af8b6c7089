"""Helpers of the tool-agent tests: a tool agent made from the tiny task's research agent by hand,
shaped as contract section 1 says the compiler emits one (reply format "tools", a tool per
action, prompt/problem/turn templates), and put in place of the research agent while a test runs.
"""
from __future__ import annotations

import copy
import json
import re

RESEARCH_TEXT = [  # the research agent's text sections, as a tool agent declares them
    {"name": "Reflection", "kind": "text", "role": "reflection", "instruction": "what the last result means"},
    {"name": "Research Plan and Status", "kind": "text", "role": "plan", "instruction": "the plan"},
    {"name": "Fact Check", "kind": "text", "role": "fact-check", "instruction": "what is confirmed"},
    {"name": "Thought", "kind": "text", "role": "thought", "instruction": "what to do now"},
]
PROMPT = """You are a researcher working in a workspace, your current directory.
{% if tools %}Tools:
{{ tools }}
{% endif %}Before each tool call write:
{{ reply_format }}
You have at most {{ max_steps }} steps.
"""
PROBLEM = "Research problem:\n{{ task.problem }}\n"
TURN = "This is step {{ step }} of at most {{ max_steps }}.{% if retrieved %}\nFrom your log:\n{{ retrieved }}{% endif %}"


def snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def tools_agent(agent, fields: dict | None = None, **reply):
    """The AgentBuild `agent` (a text agent) as a tool agent; `reply` overrides the reply format's
    fields (sections, sections_required, tool_choice, parallel, list_tools, fallback), `fields`
    the agent's (history_steps, format_retries, ...)."""
    from mlab.build import AgentBuild
    from mlab.documents.view import thaw
    doc = thaw(agent.view)
    doc.update(fields or {})
    fallback = {"format": doc["reply"]["format"], "sections": doc["reply"]["sections"]}
    doc["reply"] = dict({"format": "tools", "sections": RESEARCH_TEXT, "sections_required": False,
                         "tool_choice": "required", "parallel": "off", "list_tools": False,
                         "fallback": fallback}, **reply)
    actions = thaw(agent.actions)
    for action in actions["actions"]:
        action["tool_name"] = snake(action["name"])
        action["tool"] = {"type": "function", "function": {
            "name": action["tool_name"], "description": f"{action['description']}\nReturns: {action['returns']}",
            "parameters": action["input_schema"]}}
    templates = dict(agent.templates, prompt=PROMPT, problem=PROBLEM, turn=TURN)
    return AgentBuild.of(agent.name, doc, actions, templates, agent.build)


def use_tools_agent(monkeypatch, fields: dict | None = None, **reply) -> None:
    """While the test runs, every build's agent is read as its tool-agent form (the research agent
    of the tiny task becomes a tool agent, in a new run and on resume alike)."""
    from mlab.build import Build

    read = Build.agent

    def agent(self, name):
        return tools_agent(read(self, name), fields, **reply)

    monkeypatch.setattr(Build, "agent", agent)


def call(name: str, arguments, content: str | None = "Thought: one step at a time", **extra) -> dict:
    """A scripted reply object with one tool call."""
    return dict({"content": content, "tool_calls": [{"name": name, "arguments": arguments}]}, **extra)


def write_replies(folder, replies: list) -> str:
    path = folder / "replies.json"
    path.write_text(json.dumps(replies))
    return f"mlab/scripted:{path}"


def assert_calls_answered(messages: list[dict]) -> None:
    """Every assistant tool call is answered by the tool messages right after it, in order, and no
    tool message answers a call that is not there (what providers require)."""
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            assert index > 0 and messages[index - 1]["role"] in ("assistant", "tool"), messages
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            answers = messages[index + 1:index + 1 + len(ids)]
            assert [a["role"] for a in answers] == ["tool"] * len(ids), messages
            assert [a["tool_call_id"] for a in answers] == ids
    tools = [m for m in messages if m["role"] == "tool"]
    called = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert sorted(m["tool_call_id"] for m in tools) == sorted(called)
