"""A tool agent's step on the run page: the assistant message, the tool call and the tool result.

A step of a tool agent (trace record model.tool_call, model.tool_result, model.message) shows the
call as the model sent it: the tool's name, the call's id and the arguments text byte for byte
(not re-serialised, so a malformed or oddly spaced call is seen as it came), then the tool result
that went back, flagged when it was sent as an error. A message whose calls ran in order is held
by its first record; the later records say which call of the message they ran.
"""
from __future__ import annotations

import json
from html import escape

ARGUMENTS_CHARS = 8000  # arguments longer than this are clipped (an Edit Script call can be long)
PRETTY_OVER_CHARS = 100  # longer arguments are also shown indented, one field a line


def is_tool_step(model: dict) -> bool:
    return bool(model.get("tool_call") or model.get("tool_result") or model.get("message"))


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit:,} more characters not shown …]"


def format_badge(model: dict, declared: str | None) -> str:
    """Which reply format produced the step, marked when it is not the declared one (a fallback)."""
    ran = model.get("format")
    if not ran:
        return ""
    fallback = declared is not None and ran != declared
    title = f"declared {declared}; this step ran the fallback format" if fallback else "the declared reply format"
    return (f"<span class='format-badge{' fallback' if fallback else ''}' title='{escape(title)}'>"
            f"{escape(ran)}{' (fallback)' if fallback else ''}</span>")


def assistant_text(model: dict, shown_sections: bool) -> str:
    """The message's text content when no declared section showed it (sections not required)."""
    message = model.get("message") or {}
    content = message.get("content")
    if shown_sections or not isinstance(content, str) or not content.strip():
        return ""
    return (f"<div class='section role-other assistant-text'><h3>assistant message text</h3>"
            f"<div class='text'>{escape(_clip(content, ARGUMENTS_CHARS))}</div></div>")


def _calls_of_message(message: dict) -> list[dict]:
    calls = message.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _pretty(arguments: str) -> str:
    """The arguments indented as JSON, or '' when they are not a JSON object (shown as sent only)."""
    from mlab.models.decode import object_arguments

    value = object_arguments(arguments)   # bounded: a trace from elsewhere may hold arguments nested 100,000 deep
    if value is None:
        return ""
    if not isinstance(value, dict) or not value:
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False)


def tool_call(model: dict, action: str | None) -> str:
    """The call this step ran: tool name (and the action it names), id, and arguments as sent."""
    call = model.get("tool_call") or {}
    message = model.get("message") or {}
    in_message = _calls_of_message(message)
    if not call and not in_message:
        return ("<div class='tool-call none'><h3>Tool call</h3><p class='meta'>the message made no tool "
                "call</p></div>")
    if not call:  # a record holding the message but not naming its call: show the message's first
        first = in_message[0]
        function = first.get("function") or {}
        call = {"id": first.get("id"), "name": function.get("name"), "arguments": function.get("arguments")}
    name, arguments = str(call.get("name") or ""), call.get("arguments")
    arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
    facts = [f"<code class='name'>{escape(name)}</code>"]
    if action and action != name:
        facts.append(f"<span class='meta'>→ action {escape(action)}</span>")
    facts.append(f"<span class='meta'>id <code class='call-id'>{escape(str(call.get('id') or '–'))}</code></span>")
    if isinstance(call.get("index"), int) and len(in_message) > 1:
        facts.append(f"<span class='meta'>call {call['index'] + 1} of {len(in_message)} in the message</span>")
    elif isinstance(call.get("index"), int) and call["index"] > 0:
        facts.append(f"<span class='meta'>call {call['index'] + 1} of the message of an earlier step</span>")
    body = (f"<h4>arguments as sent</h4><pre class='tool-arguments'>{escape(_clip(arguments, ARGUMENTS_CHARS))}"
            "</pre>")
    pretty = _pretty(arguments) if len(arguments) > PRETTY_OVER_CHARS else ""
    if pretty and pretty != arguments:
        body += f"<details><summary>arguments, indented</summary><pre>{escape(_clip(pretty, ARGUMENTS_CHARS))}</pre></details>"
    others = [c for c in in_message if c.get("id") != call.get("id")]
    # with parallel off, the calls not run were answered at once (one action per step)
    answered = {str(o.get("tool_call_id")): str(o.get("content") or "") for o in model.get("other_results") or []
                if isinstance(o, dict)}
    if others:
        listed = "".join(f"<li><code>{escape(str((c.get('function') or {}).get('name')))}</code> "
                         f"<span class='meta'>id {escape(str(c.get('id')))}"
                         + (f"; not run, answered: “{escape(_clip(answered[str(c.get('id'))], 300))}”"
                            if str(c.get("id")) in answered else "") + "</span></li>" for c in others)
        body += f"<p class='meta'>the message's other call(s):</p><ul class='other-calls'>{listed}</ul>"
    return f"<div class='tool-call'><h3>Tool call</h3><p>{' '.join(facts)}</p>{body}</div>"


def tool_result(model: dict, observation: str) -> str:
    """The tool message sent back: its call id, the error flag, and its content where it is not
    the observation shown below it (a summary of a long one)."""
    result = model.get("tool_result")
    if not isinstance(result, dict):
        return ""
    error = bool(result.get("is_error"))
    flag = ("<span class='status error tool-error'>sent as an error</span>" if error
            else "<span class='status ok'>sent as a result</span>")
    content = str(result.get("content") or "")
    same = content == observation
    shown = "" if same else (f"<details><summary>content sent ({len(content):,} characters; differs from the "
                             f"observation)</summary><pre>{escape(_clip(content, ARGUMENTS_CHARS))}</pre></details>")
    return (f"<div class='tool-result{' error' if error else ''}' data-error='{'yes' if error else 'no'}'>"
            f"<h3>Tool result</h3><p>{flag} <span class='meta'>for call "
            f"<code>{escape(str(result.get('tool_call_id') or '–'))}</code>"
            f"{'; content is the observation below' if same else ''}</span></p>{shown}</div>")
