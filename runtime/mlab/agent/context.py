"""The variables each compiled template receives: one builder per template of spec/template-context.json.

Every builder returns a dict with exactly the keys the spec declares for its template (a test
keeps them equal), so a template rendered with StrictUndefined never meets a missing name.
The agent loop calls these; the helpers turn runtime objects (task builds, action-table
entries, trace records) into the plain values the templates expect.
"""
from __future__ import annotations

import json
from typing import Iterable

from mlab.documents.agent import Action, Section
def task_view(task) -> dict:
    """The `task` object of the templates, from a TaskBuild or its view (mlab.documents.Task)."""
    view = getattr(task, "view", task)
    submission = view.submission
    return {"name": view.name, "title": view.title, "problem": view.problem,
            "submission_file": submission.file if submission else None,
            "submission_columns": list(submission.columns) if submission else [],
            "metric": view.metric.name, "direction": view.metric.direction}


def action_view(action: Action) -> dict:
    """One action-table entry as the tools template sees it."""
    return {"name": action.name, "description": action.description, "usage": action.usage,
            "returns": action.returns}


def tool_action_view(action: Action) -> dict:
    """One action-table entry as a tool agent's tools template sees it (with its tool name)."""
    from mlab.models.offline import action_tool_name

    return dict(action_view(action), tool_name=action_tool_name(action))


def history_step_view(record: dict) -> dict:
    """One trace record as the history template sees it (the parsed reply comes from record.model.reply)."""
    model = record.get("model") or {}
    action_input = record.get("action_input")
    return {"number": record["step"], "reply": dict(model.get("reply") or {}),
            "action": record.get("action") if isinstance(record.get("action"), str) else json.dumps(record.get("action")),
            "action_input": action_input if isinstance(action_input, str) else json.dumps(action_input, ensure_ascii=False),
            "observation": record["observation"]}


def prompt_text(value) -> str:
    """A value as a prompt shows it: a string as itself, anything else as its JSON, non-ASCII kept
    (a document written to a file is mlab.standard_json.json_text's job)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# -- one builder per template ----------------------------------------------------------

def prompt_context(*, task, tools: str, tool_names: list[str], reply_format: str, history: str,
                   research_log: str, retrieved: str, step: int, max_steps: int) -> dict:
    return {"task": task_view(task), "tools": tools, "tool_names": list(tool_names),
            "reply_format": reply_format, "history": history, "research_log": research_log,
            "retrieved": retrieved, "step": int(step), "max_steps": int(max_steps)}


def tools_context(*, actions: Iterable[Action]) -> dict:
    return {"actions": [action_view(a) for a in actions]}


def reply_format_context(*, format: str, sections: Iterable[Section]) -> dict:
    return {"format": format, "sections": [{"name": s.name, "kind": s.kind, "role": s.role,
                                            "instruction": s.instruction} for s in sections]}


def history_context(*, steps: Iterable[dict]) -> dict:
    """`steps`: trace records (or already-built step views), oldest first."""
    return {"steps": [s if "number" in s else history_step_view(s) for s in steps]}


def format_error_context(*, error: str, reply_format: str, tool_names: list[str]) -> dict:
    return {"error": error, "reply_format": reply_format, "tool_names": list(tool_names)}


def understand_file_context(*, file_name: str, things_to_look_for: str, chunk: str, chunk_index: int,
                            chunk_count: int) -> dict:
    return {"file_name": file_name, "things_to_look_for": things_to_look_for, "chunk": chunk,
            "chunk_index": int(chunk_index), "chunk_count": int(chunk_count)}


def understand_file_merge_context(*, file_name: str, things_to_look_for: str, answers: list[str]) -> dict:
    return {"file_name": file_name, "things_to_look_for": things_to_look_for, "answers": list(answers)}


def edit_script_context(*, script_name: str, content: str, instruction: str) -> dict:
    return {"script_name": script_name, "content": content, "instruction": instruction}


def edit_script_segment_context(*, script_name: str, segment: str, start_line: int, end_line: int,
                                instruction: str) -> dict:
    return {"script_name": script_name, "segment": segment, "start_line": int(start_line),
            "end_line": int(end_line), "instruction": instruction}


def summarize_observation_context(*, action: str, action_input, observation: str, chunk_index: int,
                                  chunk_count: int) -> dict:
    return {"action": action, "action_input": prompt_text(action_input), "observation": observation,
            "chunk_index": int(chunk_index), "chunk_count": int(chunk_count)}


def reflection_context(*, things_to_reflect_on: str, research_log: str, history: str, task) -> dict:
    return {"things_to_reflect_on": things_to_reflect_on, "research_log": research_log, "history": history,
            "task": task_view(task)}


def retrieve_log_context(*, current_plan: str, research_log: str, task) -> dict:
    return {"current_plan": current_plan, "research_log": research_log, "task": task_view(task)}


def append_summary_context(*, step: int, reply: str, action: str, action_input, observation: str) -> dict:
    return {"step": int(step), "reply": reply, "action": action, "action_input": prompt_text(action_input),
            "observation": observation}


# -- the templates of a tool agent (spec/template-context.json, tools_agent_templates) ----------

def tools_prompt_context(*, task, tools: str, tool_names: list[str], reply_format: str, max_steps: int) -> dict:
    return {"task": task_view(task), "tools": tools, "tool_names": list(tool_names),
            "reply_format": reply_format, "max_steps": int(max_steps)}


def problem_context(*, task) -> dict:
    return {"task": task_view(task)}


def turn_context(*, step: int, max_steps: int, retrieved: str, research_log: str, task) -> dict:
    return {"step": int(step), "max_steps": int(max_steps), "retrieved": retrieved, "research_log": research_log,
            "task": task_view(task)}


def tools_tools_context(*, actions: Iterable[Action], mode: str) -> dict:
    return {"actions": [tool_action_view(a) for a in actions], "mode": mode}


def fallback_reply_format_context(*, format: str, sections: Iterable[Section]) -> dict:
    return reply_format_context(format=format, sections=sections)


BUILDERS = {
    "prompt": prompt_context,
    "tools": tools_context,
    "reply_format": reply_format_context,
    "history": history_context,
    "format_error": format_error_context,
    "understand_file": understand_file_context,
    "understand_file_merge": understand_file_merge_context,
    "edit_script": edit_script_context,
    "edit_script_segment": edit_script_segment_context,
    "summarize_observation": summarize_observation_context,
    "reflection": reflection_context,
    "retrieve_log": retrieve_log_context,
    "append_summary": append_summary_context,
}

# A tool agent's templates: these replace or add to BUILDERS' (the others are BUILDERS').
TOOLS_BUILDERS = {
    "prompt": tools_prompt_context,
    "problem": problem_context,
    "turn": turn_context,
    "tools": tools_tools_context,
    "reply_format": reply_format_context,
    "fallback_reply_format": fallback_reply_format_context,
}
