"""Reading a provider's response: the text or the assistant message of its first choice, checked
(a response without choices, a message or text content is MalformedResponse, retried like a
server error), the provider fields that must be echoed back, and the usage it reports."""
from __future__ import annotations

import json

from mlab.models.decode import loads, refusal_text
from mlab.standard_json import MAX_JSON_DEPTH


class MalformedResponse(Exception):
    """A provider's response that cannot be used (no choices, no message, content not text): a
    model fault, retried like a server error."""


def reply_text(response) -> str:
    """The text of a completion response's first choice, after checking that it is one."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, (list, tuple)) or not choices:
        raise MalformedResponse("the response has no choices")
    message = getattr(choices[0], "message", None)
    if message is None and isinstance(choices[0], dict):
        message = choices[0].get("message")
    if message is None:
        raise MalformedResponse("the response's first choice has no message")
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if content is None:
        return ""  # a reply of tool calls only, or an empty one: the format error says what is missing
    if not isinstance(content, str):
        raise MalformedResponse(f"the response's message content is {type(content).__name__}, not text")
    return content


# Fields of an assistant message that a provider needs echoed back in the next request.
ECHOED_FIELDS = ("reasoning_content", "thinking_blocks")


def reply_message(response) -> dict:
    """The assistant message of a chat response's first choice, in OpenAI form: role, content
    (text or None), tool_calls as {id, type, function {name, arguments}} with the arguments as
    the model sent them, and the provider fields of ECHOED_FIELDS that are set. A call's id or
    name is kept as sent, even when missing: the agent loop tells the model what is wrong."""
    content = reply_text(response) if _first_message(response).get("content") is not None else None
    message = {"role": "assistant", "content": content}
    raw_calls = _first_message(response).get("tool_calls") or []
    if not isinstance(raw_calls, (list, tuple)):
        raise MalformedResponse(f"the response's tool_calls is {type(raw_calls).__name__}, not a list")
    calls = []
    for raw in raw_calls:
        raw = _as_dict(raw)
        function = _as_dict(raw.get("function"))
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            try:  # some providers hand the arguments over decoded
                arguments = json.dumps(arguments, ensure_ascii=False)
            except RecursionError:  # nested past any bound: refused as the transport refuses text
                arguments = refusal_text(f"they nest more than {MAX_JSON_DEPTH} levels deep")
            except (TypeError, ValueError):
                arguments = str(arguments)
        calls.append({"id": raw.get("id"), "type": raw.get("type") or "function",
                      "function": {"name": function.get("name"), "arguments": arguments}})
    if calls:
        message["tool_calls"] = calls
    for name in ECHOED_FIELDS:
        value = _first_message(response).get(name)
        if value not in (None, [], ""):
            message[name] = _plain(value)
    return message


def _first_message(response) -> dict:
    reply_text(response)  # checks that there is a first choice with a message
    choice = response.choices[0]
    message = choice.get("message") if isinstance(choice, dict) else getattr(choice, "message", None)
    return _as_dict(message)


def _as_dict(value) -> dict:
    if isinstance(value, dict):
        return value
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump()
        except (TypeError, ValueError, AttributeError):  # it cannot serialise itself: read its attributes
            pass
    return {key: getattr(value, key) for key in dir(value) if not key.startswith("_")
            and not callable(getattr(value, key, None))} if value is not None else {}


def _plain(value):
    """A provider field as plain JSON values (pydantic objects dumped); MalformedResponse when it
    nests past the bounds of mlab.models.decode (a hostile reasoning block)."""
    try:
        text = json.dumps(value, default=lambda v: v.model_dump() if hasattr(v, "model_dump") else str(v))
    except RecursionError:
        raise MalformedResponse("the response's reasoning fields nest too deeply to be read") from None
    except (TypeError, ValueError):
        return str(value)
    try:
        return loads(text, what="the response's reasoning")
    except ValueError as problem:
        raise MalformedResponse(str(problem)) from None


def usage_counts(usage) -> tuple[int, int, int] | None:
    """(prompt, completion, cached) tokens a provider reported; None when it reported none usable."""
    def count(value) -> int | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e18:
            return None  # also NaN and infinity: a count a provider got wrong is no count
        return int(value)

    prompt = count(getattr(usage, "prompt_tokens", None))
    if usage is None or prompt is None:
        return None
    details = getattr(usage, "prompt_tokens_details", None)
    return (prompt, count(getattr(usage, "completion_tokens", 0) or 0) or 0,
            count(getattr(details, "cached_tokens", 0) or 0) or 0 if details else 0)


def finish_reason(response) -> str | None:
    """Why the first choice of a response ended (stop, length, tool_calls), None when it does not say."""
    choices = getattr(response, "choices", None) or []
    reason = getattr(choices[0], "finish_reason", None) if choices else None
    return reason if isinstance(reason, str) else None


def _field(value, name: str):
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def stream_pieces(chunk) -> list[tuple]:
    """The pieces of one streamed chunk, in order: ("reasoning", text), ("signature", text), ("text",
    text), ("tool", index, id, name, arguments piece) (see ModelClient.chat_stream)."""
    choices = getattr(chunk, "choices", None) or []
    delta = _field(choices[0], "delta") if choices else None
    if delta is None:
        return []
    found: list[tuple] = []
    reasoning = _field(delta, "reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        found.append(("reasoning", reasoning))
    for block in _field(delta, "thinking_blocks") or []:
        signature = _field(block, "signature")
        if isinstance(signature, str) and signature:
            found.append(("signature", signature))
    content = _field(delta, "content")
    if isinstance(content, str) and content:
        found.append(("text", content))
    for position, call in enumerate(_field(delta, "tool_calls") or []):
        index = _field(call, "index")
        function = _field(call, "function")
        arguments = _field(function, "arguments") if function is not None else None
        found.append(("tool", index if isinstance(index, int) else position, _field(call, "id"),
                      _field(function, "name") if function is not None else None,
                      arguments if isinstance(arguments, str) else ""))
    return found
