"""The model-backed primitives: understand_file, edit_script, edit_script_segment,
reflection and retrieve_log. Each renders its prompt from the agent's compiled
templates and calls the action's declared model tier.

They find what they need in `ctx.services` (a RunServices the agent loop fills in):
`models` (a ModelClient), `templates` (prompting.Templates), `task` (the TaskBuild),
`history_text` (the rendered recent steps) and `calls` (a list the loop records).
"""
from __future__ import annotations

import difflib
import re

from mlab.agent import context as C
from mlab.actions.primitives import PrimitiveRegistry
from mlab.actions.files import read_text, write_text
from mlab.models.errors import ModelError
from mlab.models.errors import BudgetSpent
from mlab.observation import ActionFailed, Observation
from mlab.text import bound_text

DIFF_SHOWN_CHARS = 6000


def _call(ctx, template: str, purpose: str, **variables) -> str:
    services = ctx.services
    if services.models is None:
        raise ActionFailed(f"the action {ctx.action.name!r} needs a language model, and this run has none")
    prompt = services.templates.render(template, **C.BUILDERS[template](**variables))
    tier = ctx.action.tier or "main"
    try:
        call = services.models.complete(tier, prompt, purpose=purpose)
    except BudgetSpent as spent:  # the run's budget ran out in the middle of the action: it stops here
        services.model_failure = spent  # the loop ends the run after this step, as the limit does
        raise ActionFailed(f"the action stopped: {spent} (after {len(services.calls)} model call(s) "
                           "this step)") from None
    except ModelError as problem:
        services.model_failure = problem  # the loop ends the run after this step
        raise ActionFailed(f"the {tier} model could not be reached: {problem}") from None
    services.calls.append(dict(call.to_json(), prompt=prompt))
    return call.response


def extract_code(reply: str) -> str:
    """The code a model returned: the longest fenced block, else the whole reply."""
    blocks = re.findall(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\n(.*?)```", reply, re.S)
    if blocks:
        return max(blocks, key=len)
    return reply.strip("\n") + "\n"


def unified_diff(before: str, after: str, name: str) -> str:
    diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        fromfile=f"{name} (before)", tofile=f"{name} (after)"))
    return diff or "(no change)"


def understand_file(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["file_name"], "file_name")
    rel = ws.relative(real)
    text = read_text(real, rel)
    size = max(int(params.get("chunk_chars") or 10000), 1000)
    chunks = [text[i:i + size] for i in range(0, len(text), size)] or [""]
    answers = [_call(ctx, "understand_file", "understand_file", file_name=rel,
                     things_to_look_for=inputs["things_to_look_for"], chunk=chunk, chunk_index=i,
                     chunk_count=len(chunks))
               for i, chunk in enumerate(chunks, 1)]
    if len(answers) == 1:
        return Observation(answers[0])
    merged = _call(ctx, "understand_file_merge", "understand_file", file_name=rel,
                   things_to_look_for=inputs["things_to_look_for"], answers=answers)
    return Observation(merged)


def _save_edit(ctx, rel_source: str, save_name: str, before: str, after: str) -> Observation:
    real, rel = write_text(ctx, save_name, after, "w")
    diff = unified_diff(before, after, rel)
    where = f"{rel}" if rel == rel_source else f"{rel} (from {rel_source})"
    return Observation(f"The edited script was saved to {where}. Check that the change is right; "
                       f"Undo Edit Script reverts it. The diff:\n\n" + bound_text(diff, DIFF_SHOWN_CHARS))


def edit_script(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    name = inputs["script_name"]
    real = ws.resolve(name, "script_name")
    rel = ws.relative(real)
    before = read_text(real, rel) if real.is_file() else ""
    reply = _call(ctx, "edit_script", "edit_script", script_name=rel, content=before,
                  instruction=inputs["edit_instruction"])
    return _save_edit(ctx, rel, inputs["save_name"], before, extract_code(reply))


def edit_script_segment(ctx, inputs, params) -> Observation:
    ws = ctx.workspace
    real = ws.readable_file(inputs["script_name"], "script_name")
    rel = ws.relative(real)
    before = read_text(real, rel)
    lines = before.splitlines(True)
    start, end = inputs["start_line_number"], inputs["end_line_number"]
    max_lines = int(params.get("max_lines") or 200)
    if start < 1 or end < start or start > max(len(lines), 1):
        raise ActionFailed(f"the line range {start}-{end} is not inside {rel}, which has {len(lines)} lines")
    if end - start + 1 > max_lines:
        raise ActionFailed(f"at most {max_lines} lines can be edited at once; the range {start}-{end} has "
                           f"{end - start + 1}")
    segment = "".join(lines[start - 1:end])
    reply = _call(ctx, "edit_script_segment", "edit_script_segment", script_name=rel, segment=segment,
                  start_line=start, end_line=min(end, len(lines)), instruction=inputs["edit_instruction"])
    replacement = extract_code(reply)
    if replacement and not replacement.endswith("\n"):
        replacement += "\n"
    after = "".join(lines[:start - 1]) + replacement + "".join(lines[end:])
    return _save_edit(ctx, rel, inputs["save_name"], before, after)


def reflection(ctx, inputs, params) -> Observation:
    services = ctx.services
    return Observation(_call(ctx, "reflection", "reflection", things_to_reflect_on=inputs["things_to_reflect_on"],
                             research_log=ctx.research_log.text(), history=services.history_text,
                             task=services.task))


def retrieve_log(ctx, inputs, params) -> Observation:
    return Observation(_call(ctx, "retrieve_log", "retrieve_log", current_plan=inputs["current_plan"],
                             research_log=ctx.research_log.text(), task=ctx.services.task))


IMPLEMENTATIONS = {
    "understand_file": understand_file,
    "edit_script": edit_script,
    "edit_script_segment": edit_script_segment,
    "reflection": reflection,
    "retrieve_log": retrieve_log,
}


def install(registry: PrimitiveRegistry) -> None:
    """Swap the model-required placeholders of a table's registry for these implementations
    (contracts unchanged)."""
    for name, function in IMPLEMENTATIONS.items():
        registry.implement(name, function)
