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


def tools_agent(agent, **reply):
    """The AgentBuild `agent` (a text agent) as a tool agent; `reply` overrides the reply format's
    fields (sections, sections_required, tool_choice, parallel, list_tools, fallback)."""
    from mlab.build import AgentBuild

    doc = copy.deepcopy(agent.doc)
    fallback = {"format": doc["reply"]["format"], "sections": doc["reply"]["sections"]}
    doc["reply"] = dict({"format": "tools", "sections": RESEARCH_TEXT, "sections_required": False,
                         "tool_choice": "required", "parallel": "off", "list_tools": False,
                         "fallback": fallback}, **reply)
    actions = copy.deepcopy(agent.actions)
    for action in actions["actions"]:
        action["tool_name"] = snake(action["name"])
        action["tool"] = {"type": "function", "function": {
            "name": action["tool_name"], "description": f"{action['description']}\nReturns: {action['returns']}",
            "parameters": action["input_schema"]}}
    templates = dict(agent.templates, prompt=PROMPT, problem=PROBLEM, turn=TURN)
    return AgentBuild(agent.name, doc, actions, templates, agent.build)


def use_tools_agent(monkeypatch, **reply) -> None:
    """While the test runs, every build's agent is read as its tool-agent form (the research agent
    of the tiny task becomes a tool agent, in a new run and on resume alike)."""
    from mlab.build import Build

    read = Build.agent

    def agent(self, name):
        return tools_agent(read(self, name), **reply)

    monkeypatch.setattr(Build, "agent", agent)


def call(name: str, arguments, content: str | None = "Thought: one step at a time", **extra) -> dict:
    """A scripted reply object with one tool call."""
    return dict({"content": content, "tool_calls": [{"name": name, "arguments": arguments}]}, **extra)


def write_replies(folder, replies: list) -> str:
    path = folder / "replies.json"
    path.write_text(json.dumps(replies))
    return f"mlab/scripted:{path}"
