"""OpenAI Chat Completions: `POST /v1/chat/completions` (mini-swe-agent, AIDE, OpenCode, OpenHands,
Aider). The request is already in the model client's form; the reply is a chat.completion, or
chat.completion.chunk events ending with `data: [DONE]` when `stream` is true."""
from __future__ import annotations

import time

from mlab.external.dialects import Ask, BadRequest, Encoder, new_id, sse, tool_calls

NAME = "chat"
ERROR_TYPES = {"invalid": "invalid_request_error", "auth": "invalid_api_key", "not_found": "not_found",
               "too_large": "invalid_request_error", "limit": "mlab_limit_reached", "ended": "mlab_run_ended",
               "model_failure": "mlab_model_failure", "stalled": "mlab_stream_stalled",
               "internal": "mlab_gateway_error"}


def error_body(message: str, kind: str) -> dict:
    kind = ERROR_TYPES.get(kind, kind)
    return {"error": {"message": message, "type": kind, "code": kind}}


def parse(body) -> Ask:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("`messages` must be a non-empty list of message objects")
    tools = body.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        raise BadRequest("`tools` must be a list of tool objects")
    return Ask(messages, tools or None, body.get("tool_choice"), body.get("parallel_tool_calls"),
               model=body.get("model") if isinstance(body.get("model"), str) else None,
               stream=bool(body.get("stream")))


def _usage(call) -> dict:
    usage = {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
             "total_tokens": call.prompt_tokens + call.completion_tokens}
    if getattr(call, "cached_tokens", 0):
        usage["prompt_tokens_details"] = {"cached_tokens": call.cached_tokens}
    return usage


def _finish_reason(call) -> str:
    if tool_calls(call.message):
        return "tool_calls"
    return "length" if getattr(call, "finish_reason", None) == "length" else "stop"


def reply(call, ask: Ask) -> dict:
    """The chat.completion object for one call."""
    message = dict(call.message or {"role": "assistant", "content": call.response})
    message.setdefault("role", "assistant")
    calls = tool_calls(message)
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    else:
        message.pop("tool_calls", None)
    return {"id": new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
            "model": ask.model or getattr(call, "tier", "main"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(call), "logprobs": None}],
            "usage": _usage(call)}


class Stream(Encoder):
    """chat.completion.chunk events: the role first, then a chunk per delta, the finish reason and the
    usage, then `data: [DONE]`."""

    def __init__(self, ask: Ask):
        super().__init__(ask)
        self.base = {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk", "created": int(time.time()),
                     "model": ask.model or "main"}

    def _chunk(self, delta: dict, finish=None, **more) -> bytes:
        return sse(dict(self.base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}], **more))

    def start(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def open_block(self, delta: tuple) -> bytes:
        if delta[0] != "tool":
            return b""
        return self._chunk({"tool_calls": [{"index": delta[1], "id": delta[2], "type": "function",
                                            "function": {"name": delta[3], "arguments": ""}}]})

    def piece(self, delta: tuple) -> bytes:
        kind = delta[0]
        if kind == "text":
            return self._chunk({"content": delta[1]})
        if kind == "reasoning":
            return self._chunk({"reasoning_content": delta[1]})
        if kind == "tool" and delta[4]:
            return self._chunk({"tool_calls": [{"index": delta[1], "function": {"arguments": delta[4]}}]})
        return b""

    def close_block(self, block: tuple) -> bytes:
        return b""

    def end(self, call) -> bytes:
        return self._chunk({}, _finish_reason(call), usage=_usage(call)) + b"data: [DONE]\n\n"

    def error(self, message: str, kind: str) -> bytes:
        return sse(error_body(message, kind)) + b"data: [DONE]\n\n"
