"""A task's demonstration file (docs/tasks.md#demonstrations): read and checked at compile time."""
from __future__ import annotations

import json

from .. import ast as A
from ..values import Reporter

DEMO_ROLES = ("reflection", "plan", "fact-check", "thought", "criticism", "speak")


def demonstration_problem(document) -> str | None:
    """What is wrong with a demo.json's content (docs/tasks.md#demonstrations), or None.

    Version 2: {"format": "mlab-demonstration", "version": 2, "solution"?, "steps": [...], "variants"?};
    version 1 (still read): a non-empty JSON list of reply strings."""
    if isinstance(document, list):
        if document and all(isinstance(r, str) for r in document):
            return None
        return "a version-1 demonstration must be a non-empty JSON list of reply strings"
    if not isinstance(document, dict) or document.get("format") != "mlab-demonstration":
        return 'must hold a demonstration ({"format": "mlab-demonstration", "version": 2, "steps": [...]})'
    if document.get("version") != 2:
        return f"demonstration version {document.get('version')!r} is not supported (version 2)"
    unknown = set(document) - {"format", "version", "solution", "steps", "variants"}
    if unknown:
        return f"unknown field(s) {', '.join(sorted(unknown))}"
    if "solution" in document and not (isinstance(document["solution"], str) and document["solution"]):
        return '"solution" must be a file name'
    steps = document.get("steps")
    if not isinstance(steps, list) or not steps:
        return '"steps" must be a non-empty list'
    for number, step in enumerate(steps, 1):
        if not isinstance(step, dict) or not isinstance(step.get("action"), str) or not step["action"]:
            return f'step {number} must be an object with an "action" name'
        extra = set(step) - {"sections", "action", "input"}
        if extra:
            return f"step {number} has unknown field(s) {', '.join(sorted(extra))}"
        if not isinstance(step.get("input", {}), dict):
            return f'step {number} ({step["action"]}): "input" must be an object'
        sections = step.get("sections", {})
        if not isinstance(sections, dict) or not all(isinstance(t, str) for t in sections.values()):
            return f'step {number} ({step["action"]}): "sections" must map roles to texts'
        roles = set(sections) - set(DEMO_ROLES)
        if roles:
            return (f"step {number} ({step['action']}): unknown section role(s) {', '.join(sorted(roles))}; "
                    f"roles: {', '.join(DEMO_ROLES)}")
    variants = document.get("variants", [])
    if not isinstance(variants, list) or not all(
            isinstance(v, dict) and isinstance(v.get("files"), dict)
            and all(isinstance(k, str) and isinstance(t, str) for k, t in v["files"].items()) for v in variants):
        return '"variants" must be a list of {"description": ..., "files": {NAME: CONTENT}}'
    return None


def lower_demo(e: A.Demo, ir: dict, root, report: Reporter) -> None:
    """Set ir["demo"] to the file's path, reporting E507 when it is missing or malformed."""
    path = report.string(e.value, "`demo`")
    if path is None:
        return
    ir["demo"] = path
    file = root / path
    try:
        replies = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        report.error("E507", f"demonstration file {path!r} does not exist", e.value.span)
        return
    except (OSError, ValueError) as error:
        report.error("E507", f"demonstration file {path!r} is not valid JSON: {error}", e.value.span)
        return
    problem = demonstration_problem(replies)
    if problem:
        report.error("E507", f"demonstration file {path!r}: {problem}", e.value.span)


def demo_steps(root, path: str) -> list[dict]:
    """The steps of a version-2 demonstration that checks clean; [] for any other (E507 says why)."""
    try:
        document = json.loads((root / path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if demonstration_problem(document) or isinstance(document, list):
        return []
    return document["steps"]


def step_problem(step: dict, actions: dict[str, dict], agent: str) -> tuple[str, str] | None:
    """(what is wrong, hint) when an agent with these actions (name → action IR) cannot play the
    step, or None."""
    action = actions.get(step["action"])
    if action is None:
        return (f"uses the action {step['action']!r}, which agent {agent} does not have",
                f"its actions: {', '.join(actions)}; change the step, or play the task with an agent that has it")
    schema = action.get("input_schema") or {}
    given, takes = set(step.get("input", {})), list(schema.get("properties", {}))
    missing = [name for name in schema.get("required", []) if name not in given]
    unknown = sorted(given - set(takes)) if schema.get("additionalProperties") is False else []
    if missing:
        return (f"gives {step['action']} no {', '.join(missing)}, which agent {agent} requires",
                f"{step['action']} takes the inputs: {', '.join(takes)}")
    if unknown:
        return (f"gives {step['action']} the input(s) {', '.join(unknown)}, which agent {agent} does not take",
                f"{step['action']} takes the inputs: {', '.join(takes) or 'none'}")
    return None


def check_demo_players(decl: A.Task, ir: dict, root, players: dict[str, tuple[str, dict]], report: Reporter) -> None:
    """E514 for each agent that would play the demonstration (the task's default agent, each agent an
    experiment runs the task with) and cannot: a step whose action it lacks, or whose inputs do not fit.

    `players` maps an agent's name to (why it plays the task, its action table)."""
    if not ir["demo"]:
        return
    steps = demo_steps(root, ir["demo"])
    entry = next(e for e in decl.entries if isinstance(e, A.Demo))
    for agent, (why, table) in players.items():
        actions = {a["name"]: a for a in table["actions"]}
        for number, step in enumerate(steps, 1):
            problem = step_problem(step, actions, f"`{agent}` ({why})")
            if problem:
                report.error("E514", f"demonstration {ir['demo']!r} step {number} {problem[0]}", entry.value.span,
                             hint=problem[1])
                break
