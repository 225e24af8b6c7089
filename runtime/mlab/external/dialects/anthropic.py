"""Anthropic Messages: `POST /v1/messages` (streamed as server-sent events with `event:` lines) and
`POST /v1/messages/count_tokens` (Claude Code).

In: `system` (text or text blocks), messages whose content is text or blocks (text, image,
tool_use, tool_result, thinking, redacted_thinking, document with text), `tools` (custom tools
with an input_schema), `tool_choice` (auto, any, tool, none; disable_parallel_tool_use).
Out: content blocks (thinking with its signature, text, tool_use with the input object),
stop_reason (end_turn, tool_use, max_tokens), usage with input_tokens counted without the
cache's reads and writes (cache_read_input_tokens, cache_creation_input_tokens), as Anthropic
counts them. Errors: {"type": "error", "error": {"type": ..., "message": ...}}.
"""
from __future__ import annotations

import json

from mlab.external.dialects import Ask, BadRequest, Encoder, arguments_object, new_id, sse, tool_calls, usage_of

NAME = "anthropic"
ERROR_TYPES = {"invalid": "invalid_request_error", "auth": "authentication_error", "not_found": "not_found_error",
               "too_large": "request_too_large", "limit": "rate_limit_error", "ended": "rate_limit_error",
               "model_failure": "api_error", "stalled": "api_error", "internal": "api_error"}


def error_body(message: str, kind: str) -> dict:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(kind, "api_error"), "message": message}}


def _text_of(content, where: str) -> str:
    """A system prompt or tool result as text: a string, or the text of its text blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            elif isinstance(block, dict) and block.get("type") == "image":
                texts.append("[an image]")
            else:
                raise BadRequest(f"{where}: a block of type {_type(block)} is not supported here (text or image)")
        return "\n".join(texts)
    raise BadRequest(f"{where} must be a text or a list of text blocks")


def _type(block) -> str:
    return repr(block.get("type")) if isinstance(block, dict) else type(block).__name__


def _image_part(block: dict, where: str) -> dict:
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    if source.get("type") == "base64":
        return {"type": "image_url", "image_url": {"url": f"data:{source.get('media_type')};base64,{source.get('data')}"}}
    if source.get("type") == "url":
        return {"type": "image_url", "image_url": {"url": source.get("url")}}
    raise BadRequest(f"{where}: an image's source must be base64 or url")


def _system_text(content, where: str) -> str:
    """A system message's content: a text, or a list of text blocks joined."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        content = "\n\n".join(str(b.get("text") or "") for b in content)
    if not isinstance(content, str):
        raise BadRequest(f"{where}: a system message's content is a text or a list of text blocks")
    return content


def _message(message, index: int) -> list[dict]:
    """One Anthropic message as the OpenAI messages it becomes (tool results are messages of their own)."""
    where = f"messages[{index}]"
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "system"):
        raise BadRequest(f"{where} must be an object with role 'user', 'assistant' or 'system'")
    role, content = message["role"], message.get("content")
    if role == "system":  # Claude Code 2.1 sends its environment as a system message among the others
        return [{"role": "system", "content": _system_text(content, where)}]
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a text or a list of content blocks")
    parts, calls, results, thinking = [], [], [], []
    for number, block in enumerate(content):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif kind == "image":
            parts.append(_image_part(block, at))
        elif kind == "document":
            source = block.get("source") if isinstance(block.get("source"), dict) else {}
            if source.get("type") != "text":
                raise BadRequest(f"{at}: only documents with a text source are supported")
            parts.append({"type": "text", "text": str(source.get("data") or "")})
        elif kind == "tool_use" and role == "assistant":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise BadRequest(f"{at}: a tool_use block needs a text id and name")
            calls.append({"id": block["id"], "type": "function",
                          "function": {"name": block["name"], "arguments": json.dumps(block.get("input") or {})}})
        elif kind == "tool_result" and role == "user":
            if not isinstance(block.get("tool_use_id"), str):
                raise BadRequest(f"{at}: a tool_result block needs a text tool_use_id")
            text = _text_of(block.get("content"), at)
            if block.get("is_error"):
                text = f"[error] {text}"
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            thinking.append({k: v for k, v in block.items() if k != "cache_control"})
        else:
            raise BadRequest(f"{at}: a block of type {_type(block)} is not supported in a {role} message "
                             "(text, image, document, tool_use, tool_result, thinking)")
    if role == "assistant":
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        made: dict = {"role": "assistant", "content": text or None}
        if calls:
            made["tool_calls"] = calls
        if thinking:
            made["thinking_blocks"] = thinking
            made["reasoning_content"] = "".join(b.get("thinking") or "" for b in thinking)
        return [made]
    out = list(results)
    if parts:
        plain = all(p["type"] == "text" for p in parts)
        out.append({"role": "user", "content": "\n".join(p["text"] for p in parts) if plain and len(parts) == 1
                    else parts})
    return out


def _tools(tools) -> list[dict] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list of tool definitions")
    made = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise BadRequest(f"tools[{index}] must be an object with a name")
        if tool.get("type") not in (None, "custom"):
            raise BadRequest(f"tools[{index}] ({tool['name']}): the tool type {tool['type']!r} is Anthropic's own; "
                             "the gateway serves custom tools (name, description, input_schema)")
        schema = tool.get("input_schema") if isinstance(tool.get("input_schema"), dict) else {"type": "object"}
        function = {"name": tool["name"], "parameters": schema}
        if tool.get("description"):
            function["description"] = str(tool["description"])
        made.append({"type": "function", "function": function})
    return made or None


def _tool_choice(choice) -> tuple[object, bool | None]:
    if choice is None:
        return None, None
    if not isinstance(choice, dict):
        raise BadRequest("`tool_choice` must be an object such as {\"type\": \"auto\"}")
    parallel = None if choice.get("disable_parallel_tool_use") is None else not choice["disable_parallel_tool_use"]
    kind = choice.get("type")
    if kind == "auto":
        return "auto", parallel
    if kind == "any":
        return "required", parallel
    if kind == "none":
        return "none", parallel
    if kind == "tool" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}, parallel
    raise BadRequest("`tool_choice.type` must be auto, any, tool (with a name) or none")


def parse(body) -> Ask:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list of messages")
    converted: list[dict] = []
    system = body.get("system")
    if system:
        converted.append({"role": "system", "content": _text_of(system, "system")})
    for index, message in enumerate(messages):
        converted += _message(message, index)
    if all(message["role"] == "system" for message in converted):  # Anthropic's own API refuses empty content too
        raise BadRequest("`messages` hold no content: each message needs a non-empty `content`")
    choice, parallel = _tool_choice(body.get("tool_choice"))
    tools = _tools(body.get("tools"))
    return Ask(converted, tools, choice if tools else None, parallel if tools else None,
               model=body.get("model") if isinstance(body.get("model"), str) else None,
               stream=bool(body.get("stream")))


def _usage(call) -> dict:
    used = usage_of(call)
    return {"input_tokens": max(used["prompt"] - used["cached"] - used["cache_write"], 0),
            "output_tokens": used["completion"], "cache_creation_input_tokens": used["cache_write"],
            "cache_read_input_tokens": used["cached"]}


def _stop_reason(call) -> str:
    if tool_calls(call.message):
        return "tool_use"
    return "max_tokens" if getattr(call, "finish_reason", None) == "length" else "end_turn"


def reply(call, ask: Ask) -> dict:
    message = call.message or {"content": call.response}
    content: list[dict] = []
    for block in message.get("thinking_blocks") or []:
        if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
            content.append(block)
    if not content and message.get("reasoning_content"):
        content.append({"type": "thinking", "thinking": message["reasoning_content"], "signature": ""})
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call_id, name, arguments in tool_calls(message):
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments_object(arguments)})
    return {"id": new_id("msg_"), "type": "message", "role": "assistant", "model": ask.model or getattr(call, "tier", "main"),
            "content": content, "stop_reason": _stop_reason(call), "stop_sequence": None, "usage": _usage(call)}


def count_reply(tokens: int) -> dict:
    return {"input_tokens": tokens}


class Stream(Encoder):
    """message_start, then per block content_block_start / content_block_delta... / content_block_stop,
    then message_delta (stop reason, usage) and message_stop; an error is an `error` event."""

    def __init__(self, ask: Ask):
        super().__init__(ask)
        self.index = -1

    def start(self) -> bytes:
        message = {"id": new_id("msg_"), "type": "message", "role": "assistant", "model": self.ask.model or "main",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 0, "output_tokens": 0}}
        return sse({"type": "message_start", "message": message}, "message_start") + \
            sse({"type": "ping"}, "ping")

    def whole_arguments(self, text: str) -> str:
        return json.dumps(arguments_object(text))

    def open_block(self, delta: tuple) -> bytes:
        self.index += 1
        kind = delta[0]
        if kind == "text":
            block = {"type": "text", "text": ""}
        elif kind == "tool":
            block = {"type": "tool_use", "id": delta[2] or f"toolu_{delta[1]}", "name": delta[3] or "", "input": {}}
        else:
            block = {"type": "thinking", "thinking": "", "signature": ""}
        return sse({"type": "content_block_start", "index": self.index, "content_block": block},
                   "content_block_start")

    def piece(self, delta: tuple) -> bytes:
        kind = delta[0]
        if kind == "text":
            inner = {"type": "text_delta", "text": delta[1]}
        elif kind == "reasoning":
            inner = {"type": "thinking_delta", "thinking": delta[1]}
        elif kind == "signature":
            inner = {"type": "signature_delta", "signature": delta[1]}
        else:
            if not delta[4]:
                return b""
            inner = {"type": "input_json_delta", "partial_json": delta[4]}
        return sse({"type": "content_block_delta", "index": self.index, "delta": inner}, "content_block_delta")

    def close_block(self, block: tuple) -> bytes:
        return sse({"type": "content_block_stop", "index": self.index}, "content_block_stop")

    def end(self, call) -> bytes:
        return sse({"type": "message_delta", "delta": {"stop_reason": _stop_reason(call), "stop_sequence": None},
                    "usage": _usage(call)}, "message_delta") + sse({"type": "message_stop"}, "message_stop")

    def error(self, message: str, kind: str) -> bytes:
        return sse(error_body(message, kind), "error")
