"""An agent's reply format: checked (one action section, one input section, names told apart),
completed with the text format a tools agent falls back to, and written as its templates."""
from __future__ import annotations

from .. import ast as A
from .templates import (baked_reply_format_template, history_template, reply_format_template, tools_mode_template,
                        tools_reply_format_template, tools_template)
from ..values import Reporter

# The action and action-input sections a fallback gets when the tools block declares none.
FALLBACK_ACTION = {"sections": ("Action", "Action Input"), "json": ("action", "action_input")}
FALLBACK_INSTRUCTIONS = ("The name of exactly one tool, spelled as listed.",
                         "The input for that tool: a JSON object with the fields the tool asks for.")

def check_reply(reply: dict, report: Reporter, decl: A.Agent) -> bool:
    """Report what makes a reply impossible to split; True when it can be split unambiguously."""
    before = len(report.diagnostics)
    span = reply.get("_span") or decl.name.span
    sections = reply["sections"]
    actions = [s for s in sections if s["kind"] == "action"]
    inputs = [s for s in sections if s["kind"] == "json"]
    where = f"the reply format of agent `{decl.name.value}`"
    if len(actions) != 1:
        report.error("E701", f"{where} needs exactly one section of kind `action`, has {len(actions)}",
                     actions[1]["_span"] if len(actions) > 1 else span,
                     hint='mark the section that names the action: `section "Action" action "..."`')
    if len(inputs) != 1:
        report.error("E702", f"{where} needs exactly one section of kind `json`, has {len(inputs)}",
                     inputs[1]["_span"] if len(inputs) > 1 else span,
                     hint='mark the section that holds the input: `section "Action Input" json "..."`')
    seen: dict[str, dict] = {}
    for section in sections:
        key = section["name"].strip().lower()
        if key in seen:
            report.error("E703", f"two sections are named {section['name']!r} (ignoring case)", section["_span"])
        seen[key] = section
    if reply["format"] == "json":  # a field cannot both hold text and contain other fields
        names = {s["name"] for s in sections}
        for section in sections:
            parts = section["name"].split(".")
            outer = next((".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in names), None)
            if outer is not None:
                report.error("E703", f"field {section['name']!r} is inside field {outer!r}, which holds a value itself",
                             section["_span"], hint="a field either holds a value or groups other fields; "
                                                    "rename one of the two")
    return len(report.diagnostics) == before


def reply_templates(reply: dict, fallback: dict | None, tools_mode: bool, texts: dict[str, str]) -> dict:
    """The reply format as the IR keeps it, its templates added to `texts`."""
    if tools_mode:
        clean_reply = tools_reply(reply, fallback)
        texts["tools.j2"] = tools_mode_template(fallback and clean_reply["fallback"])
        texts["reply_format.j2"] = tools_reply_format_template(clean_reply)
        if fallback is not None:
            texts["fallback_reply_format.j2"] = baked_reply_format_template(clean_reply["fallback"])
        texts["history.j2"] = history_template(clean_reply)
    else:
        clean_reply = {"format": reply["format"], "sections": clean_sections(reply["sections"])}
        texts["tools.j2"] = tools_template(clean_reply)
        texts["reply_format.j2"] = reply_format_template(clean_reply)
        texts["history.j2"] = history_template(clean_reply)
    return clean_reply


def clean_sections(sections: list[dict]) -> list[dict]:
    return [{k: v for k, v in s.items() if not k.startswith("_")} for s in sections]


def fallback_reply(reply: dict, report: Reporter, where: str) -> dict | None:
    """The complete text reply format a tools agent falls back to: its sections, plus an action and an
    action-input section when the block declares none (the block's own are used when it does)."""
    fmt = reply["settings"]["fallback"]
    if fmt == "none":
        for section in reply["sections"]:
            if section["kind"] != "text":
                report.error("E405", f"section {section['name']!r} of {where} is of kind `{section['kind']}`, but "
                             "without a fallback format a tools reply holds only text sections", section["_span"],
                             hint="the tool call carries the action and its input; remove the section or "
                                  "declare `fallback sections`")
        return None
    sections = list(reply["sections"])
    names = FALLBACK_ACTION[fmt]
    for kind, section_name, instruction in zip(("action", "json"), names, FALLBACK_INSTRUCTIONS):
        if not any(s["kind"] == kind for s in sections):
            sections.append({"name": section_name, "kind": kind, "role": None, "instruction": instruction,
                             "_span": reply["_span"]})
    return {"format": fmt, "sections": sections, "_span": reply["_span"]}


def check_text_sections(reply: dict, report: Reporter) -> bool:
    before = len(report.diagnostics)
    seen: set[str] = set()
    for section in reply["sections"]:
        key = section["name"].strip().lower()
        if key in seen:
            report.error("E703", f"two sections are named {section['name']!r} (ignoring case)", section["_span"])
        seen.add(key)
    return len(report.diagnostics) == before


def tools_reply(reply: dict, fallback: dict | None) -> dict:
    settings = reply["settings"]
    return {"format": "tools", "sections": clean_sections([s for s in reply["sections"] if s["kind"] == "text"]),
            "sections_required": settings["sections_required"] == "true", "tool_choice": settings["tool_choice"],
            "parallel": settings["parallel"], "list_tools": settings["list_tools"] == "true",
            "fallback": None if fallback is None else {"format": fallback["format"],
                                                        "sections": clean_sections(fallback["sections"])}}
