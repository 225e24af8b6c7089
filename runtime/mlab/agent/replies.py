"""Parse an agent's reply by its declared format, leniently, into sections, an
action name and an action input; or say exactly what was wrong."""
from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass

from mlab.models.decode import MAX_REPLY_CHARS, has_non_finite
from mlab.standard_json import MAX_JSON_DEPTH
from mlab.bounded_json import balanced as _balanced
from mlab.documents.agent import Reply, Section, TextReply


class ReplyError(Exception):
    """The reply cannot be used; the message goes to the model in the format-error prompt."""


@dataclass(frozen=True)
class ParsedReply:
    sections: dict[str, str]   # section (or field) name → text, in declared order
    action: str                # a declared action name, exactly as declared
    action_input: dict


# Bounds on what a reply may hold (mlab.models.decode, shared with every other decode of model
# output). A reply past them is a format error the model is told about: nesting deeper than
# MAX_JSON_DEPTH would overflow the recursive JSON decoder (and every JSON schema check and encoder
# after it), and a reply longer than MAX_REPLY_CHARS is not parsed at all. Python literals (single
# quotes, True/None) are tried only on inputs up to LITERAL_EVAL_CHARS, since parsing Python
# costs far more memory per character than parsing JSON.
LITERAL_EVAL_CHARS = 1 << 20


def parse_json_lenient(text: str) -> object:
    """JSON as models write it: fenced, single-quoted, trailing commas, raw newlines, Python literals."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} "
                         "a reply may hold; write large files in parts (Append File)")
    candidate = _strip_fences(text.strip())
    start = _first_bracket(candidate)
    if start is not None:
        balanced, depth = _balanced(candidate, start)
        if depth > MAX_JSON_DEPTH:
            raise ReplyError(f"the action input nests objects or lists {depth:,} levels deep; at most "
                             f"{MAX_JSON_DEPTH} levels are accepted")
        candidate = balanced or candidate[start:]
    attempts = [candidate, re.sub(r",\s*([}\]])", r"\1", candidate)]
    for attempt in attempts:
        try:
            return _finite(json.loads(attempt, strict=False))  # strict=False admits raw newlines in strings
        except (ValueError, RecursionError):
            pass
    if len(candidate) <= LITERAL_EVAL_CHARS:
        pythonish = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False",
                                                       re.sub(r"\bnull\b", "None", attempts[1])))
        try:
            return _finite(ast.literal_eval(pythonish))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    raise ReplyError("the action input is not a valid JSON object "
                     f"(it begins: {candidate[:80]!r})")


def _finite(value):
    """`value`, or ReplyError when it holds NaN or an infinity (`NaN`, `Infinity`, `1e999`), which
    standard JSON has no value for: the trace, the viewer and the exports stay standard JSON."""
    if has_non_finite(value):
        raise ReplyError("the action input holds NaN or an infinite number (NaN, Infinity, or a number as "
                         "large as 1e999), which JSON has no value for; write a finite number, or a string")
    return value


def _strip_fences(text: str) -> str:
    match = re.search(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", text, re.S)
    return match.group(1).strip() if match else text


def _first_bracket(text: str) -> int | None:
    match = re.search(r"[{\[]", text)
    return match.start() if match else None


def resolve_action(name: str, actions: list[str]) -> str:
    """The declared action a reply names (exact, then ignoring case and spacing), or ReplyError with a hint."""
    cleaned = name.strip().strip("`*\"'").strip()
    if cleaned in actions:
        return cleaned
    squash = {re.sub(r"[\s_]+", " ", a).lower(): a for a in actions}
    key = re.sub(r"[\s_]+", " ", cleaned).lower()
    if key in squash:
        return squash[key]
    guess = difflib.get_close_matches(cleaned, actions, n=1, cutoff=0.5)
    hint = f" Did you mean {guess[0]!r}?" if guess else ""
    raise ReplyError(f"{cleaned!r} is not an action you can use.{hint} "
                     f"Valid actions: {', '.join(actions)}.")


def _header_pattern(name: str) -> str:
    # "Name:" at the start of a line, allowing markdown decoration such as **Name:** or ### Name:
    return rf"^[ \t>#*_-]*{re.escape(name)}[ \t*_]*:[ \t*_]*"


def labelled_sections(text: str, sections: tuple[Section, ...]) -> dict[str, str]:
    """The `Name:` sections found in a text (name → text up to the next found section)."""
    found = []
    for section in sections:
        match = re.search(_header_pattern(section.name), text, re.M | re.I)
        if match:
            found.append((match.start(), match.end(), section))
    found.sort(key=lambda item: item[0])
    values: dict[str, str] = {}
    for i, (start, end, section) in enumerate(found):
        stop = found[i + 1][0] if i + 1 < len(found) else len(text)
        values[section.name] = text[end:stop].strip()
    return values


def parse_text_sections(text: str, sections: tuple[Section, ...], required: bool = False) -> dict[str, str]:
    """A tool agent's text sections from its message's text, in declared order. A text without
    any `Name:` label counts as the first section's; with `required`, a ReplyError names the
    sections missing."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(text):,} characters long, more than the {MAX_REPLY_CHARS:,} "
                         "a reply may hold")
    values = labelled_sections(text, sections)
    if not values and text.strip() and sections:
        values = {sections[0].name: text.strip()}
    missing = [s.name for s in sections if not values.get(s.name)]
    if required and missing:
        listed = ", ".join(f"'{m}:'" for m in missing)
        raise ReplyError(f"the reply's text has no {listed} section; write every section before the tool call")
    return {s.name: values.get(s.name, "") for s in sections}


def parse_sections(text: str, sections: tuple[Section, ...], actions: list[str]) -> ParsedReply:
    values = labelled_sections(text, sections)
    action_section = next(s for s in sections if s.kind == "action")
    input_section = next(s for s in sections if s.kind == "json")
    missing = [s.name for s in (action_section, input_section) if s.name not in values]
    if missing:
        listed = ", ".join(f"'{m}:'" for m in missing)
        raise ReplyError(f"the reply has no {listed} line; every reply must name one action and give its input")
    action_text = values[action_section.name].splitlines()[0] if values[action_section.name] else ""
    action = resolve_action(action_text, actions)
    payload = parse_json_lenient(values[input_section.name])
    if not isinstance(payload, dict):
        raise ReplyError("the action input must be a JSON object such as {\"name\": \"value\"}")
    ordered = {s.name: values.get(s.name, "") for s in sections}
    return ParsedReply(ordered, action, payload)


def _dig(document: dict, path: str):
    node = document
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def parse_json_reply(text: str, fields: tuple[Section, ...], actions: list[str]) -> ParsedReply:
    document = parse_json_lenient(text)
    if not isinstance(document, dict):
        raise ReplyError("the reply must be one JSON object")
    action_field = next(f for f in fields if f.kind == "action")
    input_field = next(f for f in fields if f.kind == "json")
    name = _dig(document, action_field.name)
    if not isinstance(name, str) or not name.strip():
        raise ReplyError(f"the reply has no action name at {action_field.name!r}")
    action = resolve_action(name, actions)
    payload = _dig(document, input_field.name)
    if payload is None:
        payload = {}
    if isinstance(payload, str):
        payload = parse_json_lenient(payload) if payload.strip() else {}
    if not isinstance(payload, dict):
        raise ReplyError(f"{input_field.name!r} must be a JSON object of the action's inputs")
    values = {}
    for field in fields:
        value = _dig(document, field.name)
        values[field.name] = value if isinstance(value, str) else json.dumps(value) if value is not None else ""
    return ParsedReply(values, action, payload)


def parse_reply(text: str, reply_format: Reply | TextReply, actions: list[str]) -> ParsedReply:
    """Parse `text` per the compiled reply format ({"format": ..., "sections": [...]})."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    if reply_format.format == "json":
        return parse_json_reply(text, reply_format.sections, actions)
    return parse_sections(text, reply_format.sections, actions)
