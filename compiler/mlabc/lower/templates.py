"""Jinja templates: checking author-written prompts, and generating the blocks
(tools, reply format, history) that the compiler derives from declarations."""
from __future__ import annotations

import json
import re

from .. import ast as A
from ..resources import spec_json
from ..values import Reporter, did_you_mean
from .jinja_analysis import analyse, shape_problem

DEFAULT_FORMAT_ERROR = (
    "Your reply could not be used: {{ error }}\n"
    "Reply again, following this format exactly:\n{{ reply_format }}"
)


# The prompts only a tool-calling agent uses (a linear agent of another format, or a search agent, has none).
TOOLS_ONLY_PROMPTS = ("problem", "turn")
DEFAULT_PROBLEM = "Research problem:\n{{ task.problem }}\n"
DEFAULT_TURN = (
    "{% if retrieved %}From your research log, what bears on the work now:\n{{ retrieved }}\n\n{% endif %}"
    "This is step {{ step }} of at most {{ max_steps }}.\n"
)

# What the system prompt of a tools agent must not use, and where it goes instead.
_MOVED = {
    "history": "a tools agent sends its recent steps as the conversation's messages, so its prompt needs no "
               "history; drop it (the fallback format renders it on its own)",
    "step": "the system prompt stays the same for the whole run: move `step` to a `turn` prompt "
            "(`prompts { turn \"\"\"...\"\"\" }`), the user message that closes each step",
    "retrieved": "the system prompt stays the same for the whole run: move `retrieved` to a `turn` prompt "
                 "(`prompts { turn \"\"\"...\"\"\" }`), the user message that closes each step",
    "research_log": "the system prompt stays the same for the whole run: move `research_log` to a `turn` prompt "
                    "(`prompts { turn \"\"\"...\"\"\" }`), the user message that closes each step",
}

_KIND_SECTIONS = {"tools": "tools_agent_templates", "search": "search_agent_templates",
                  "external": "external_agent_templates"}



def text_of(value: A.Value) -> str:
    """A prompt's text; empty when the prompt was written as another kind of value (an E401)."""
    return value.value if isinstance(value, A.Str) else ""

def context_names(template: str, kind: str = "text") -> set[str]:
    """The variables `template` receives in an agent of `kind` (text, tools or search)."""
    return set(context_shape(template, kind))


def context_shape(template: str, kind: str = "text") -> dict[str, str]:
    """The variables `template` receives in an agent of `kind`, each with the catalogue's description."""
    spec = spec_json("template-context.json")
    own = spec.get(_KIND_SECTIONS.get(kind, ""), {})
    return dict(own[template] if template in own else spec["templates"][template])


def template_variables(text: str) -> set[str] | None:
    """The variables a template uses; None when it does not parse (reported by check_template)."""
    found = analyse(text)
    return set(found) if isinstance(found, frozenset) else None


def _source_line(value: A.Str, template_line: int) -> int:
    """The file line of a line of a template written in `value`."""
    offset = 1 if value.triple else 0  # the newline after an opening triple quote is dropped
    return value.span.line + offset + template_line - 1


def check_template(text: str, value: A.Value, template: str, report: Reporter, owner: str,
                   kind: str = "text") -> None:
    """Report Jinja syntax errors and variables the template context does not provide."""
    undeclared = analyse(text)
    if not isinstance(undeclared, frozenset):
        lineno, message = undeclared
        line = _source_line(value, lineno or 1) if isinstance(value, A.Str) else value.span.line
        span = value.span if line == value.span.line else \
            type(value.span)(value.span.path, line, 1 + getattr(value, "indent", 0))
        report.error("E601", f"the {template} template of {owner} is not valid Jinja: {message}", span)
        return
    allowed = context_names(template, kind)
    for name in sorted(undeclared - allowed):
        span = _locate(name, text, value)
        hint = _MOVED[name] if kind == "tools" and template == "prompt" and name in _MOVED else \
            did_you_mean(name, allowed, "available")
        report.error("E602", f"the {template} template of {owner} uses `{name}`, which it does not receive",
                     span, hint)
    if undeclared - allowed or kind == "external":
        return
    problem = shape_problem(text, context_shape(template, kind))
    if problem is not None:
        line, attribute, fields = problem
        span = _locate(attribute, text, value)
        if line is not None and isinstance(value, A.Str) and span.line != _source_line(value, line):
            at = _source_line(value, line)
            span = type(value.span)(value.span.path, at, 1 + value.indent) if at != value.span.line else value.span
        report.error("E607", f"the {template} template of {owner} reads `.{attribute}`, a field its object does "
                     "not have", span, did_you_mean(attribute, fields, "its fields"))


def _locate(name: str, text: str, value: A.Value):
    return locate(rf"\b{re.escape(name)}\b", text, value)


def locate(pattern: str, text: str, value: A.Value):
    """The source span of the first match of `pattern` in a template written as `value`."""
    match = re.search(pattern, text)
    if not match or not isinstance(value, A.Str):
        return value.span
    line_in_text = text.count("\n", 0, match.start()) + 1
    line = _source_line(value, line_in_text)
    if line == value.span.line:
        return value.span
    column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1 + value.indent
    return type(value.span)(value.span.path, line, column, line, column + len(match.group(0)))


def _raw(text: str) -> str:
    """`text` shown literally by Jinja, even when it holds `{% endraw %}` itself."""
    return "{% raw %}" + text.replace("{%", "{% endraw %}{{ '{%' }}{% raw %}") + "{% endraw %}"


def tools_template(reply: dict) -> str:
    """How each shown action is described, with a usage example in the agent's own reply format."""
    if reply["format"] == "sections":
        action_name = next(s["name"] for s in reply["sections"] if s["kind"] == "action")
        input_name = next(s["name"] for s in reply["sections"] if s["kind"] == "json")
        example = (_raw(f"{action_name}: ") + "{{ action.name }}\n" + _raw(f"{input_name}: ")
                   + "{{ action.usage | indent(2) }}")
    else:
        action_field = next(s["name"] for s in reply["sections"] if s["kind"] == "action")
        input_field = next(s["name"] for s in reply["sections"] if s["kind"] == "json")
        example = (_raw(f"fields {action_field} = ") + "{{ action.name | tojson }}"
                   + _raw(f", {input_field} = ") + "{{ action.usage | indent(2) }}")
    return (
        "{% for action in actions %}- {{ action.name }}: {{ action.description }}\n"
        "  Usage:\n  ```\n" + "  " + example.replace("\n", "\n  ") + "\n  ```\n"
        "  Returns: {{ action.returns }}\n{% endfor %}"
    )


def json_skeleton(sections: list[dict]) -> str:
    """A JSON object whose dotted paths hold each field's instruction."""
    root: dict = {}
    for section in sections:
        node = root
        *parents, leaf = section["name"].split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = section["instruction"] if section["kind"] != "json" else {"<input name>": "<value>"}
    return json.dumps(root, indent=4)


def reply_format_template(reply: dict) -> str:
    if reply["format"] == "sections":
        return ("Reply with these parts, in this order, each starting on a new line with its name and a colon:\n"
                "{% for section in sections %}{{ section.name }}: {{ section.instruction }}\n{% endfor %}")
    return ("Reply with exactly one JSON object of this shape, and nothing else:\n"
            + _raw(json_skeleton(reply["sections"])) + "\n")


def history_template(reply: dict) -> str:
    return ("{% for step in steps %}Step {{ step.number }}:\n"
            "{% for name, text in step.reply.items() %}{{ name }}: {{ text }}\n{% endfor %}"
            "Observation:\n```\n{{ step.observation }}\n```\n\n{% endfor %}")


def _tool_listing() -> str:
    return ("{% for action in actions %}- {{ action.tool_name if action.tool_name is defined else action.name }}: "
            "{{ action.description }}\n  Input: {{ action.usage | indent(2) }}\n"
            "  Returns: {{ action.returns }}\n{% endfor %}")


def tools_mode_template(fallback: dict | None) -> str:
    """A tools agent's tools as text: by tool name in tools mode (`mode` is "tools"), with usage
    examples in the fallback's own format when the fallback format runs."""
    if fallback is None:
        return _tool_listing()
    return ('{% if mode is defined and mode == "tools" %}' + _tool_listing() + "{% else %}"
            + tools_template(fallback) + "{% endif %}")


def tools_reply_format_template(reply: dict) -> str:
    """What a tools agent writes besides its tool call: the text sections, in the message's text."""
    calls = ("Call exactly one tool in each reply." if reply["parallel"] == "off"
             else "Call one or more tools in each reply; they run in the order you give them.")
    if not reply["sections"]:
        return calls + "\n"
    need = "Before the tool call" if reply["sections_required"] else "Before the tool call, if it helps"
    lines = "".join(f"{s['name']}: {s['instruction']}\n" for s in reply["sections"])
    return (_raw(f"{need}, write these parts in the text of your reply, in this order, each starting on a "
                 f"new line with its name and a colon:\n{lines}") + "\n" + calls + "\n")


def baked_reply_format_template(reply: dict) -> str:
    """A text reply format with its sections written in (it needs no context)."""
    if reply["format"] == "sections":
        lines = "".join(f"{s['name']}: {s['instruction']}\n" for s in reply["sections"])
        return _raw("Reply with these parts, in this order, each starting on a new line with its name and a "
                    f"colon:\n{lines}")
    return reply_format_template(reply)


def mention_pattern(name: str) -> str:
    """A pattern finding `name` as a whole word of a prompt (not inside a longer name)."""
    return rf"(?<![\w-]){re.escape(name)}(?![\w-])"


def mentions(text: str, name: str) -> bool:
    """Whether a prompt's text names `name` as a whole word."""
    if name not in text:  # most names: no pattern to compile
        return False
    return re.search(mention_pattern(name), text) is not None


def check_says_how_to_reply(text: str, value: A.Str, reply: dict, where: str, report: Reporter) -> None:
    """E606 for a text agent's prompt that neither renders `{{ reply_format }}` nor names each section
    of its reply format: the model would never learn how to reply."""
    used = template_variables(text)
    names = [section["name"] for section in reply["sections"]]
    if used is None or "reply_format" in used or (names and all(mentions(text, name) for name in names)):
        return
    report.error("E606", f"the prompt of {where} never says how to reply: it renders no `{{{{ reply_format }}}}` "
                 f"and does not name the sections {', '.join(names)}", value.span,
                 hint="add `{{ reply_format }}` where the prompt tells the model how to answer")
