"""Gemini: `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (`?alt=sse`: server-
sent events; without it, one JSON array of chunks) and `:countTokens`; `GET /v1beta/models` (Gemini
CLI). The model is named in the path.

In: `systemInstruction`, `contents` (user and model turns whose parts are text, thought text,
inlineData, fileData, functionCall, functionResponse), `tools` (functionDeclarations, with
`parameters` in Gemini's schema, upper-case types, or `parametersJsonSchema`), `toolConfig`
(functionCallingConfig mode AUTO, ANY, NONE, allowedFunctionNames). Field names are taken in
camelCase or snake_case. Out: candidates[0].content.parts (thought text, text, functionCall with
its args object and id), finishReason, usageMetadata (promptTokenCount, candidatesTokenCount,
totalTokenCount, cachedContentTokenCount). A stream is chunks of the same shape, a function call
whole in one chunk, the last with the finish reason and usage; an error is {"error": {"code",
"message", "status"}}.
"""
from __future__ import annotations

import base64
import json
import re

from mlab.external.dialects import (Ask, BadRequest, Encoder, arguments_object, new_id, seal, thinking_blocks,
                                    thinking_text, tool_calls, unseal, usage_of)

NAME = "gemini"
STATUSES = {"invalid": (400, "INVALID_ARGUMENT"), "auth": (401, "UNAUTHENTICATED"), "not_found": (404, "NOT_FOUND"),
            "too_large": (413, "INVALID_ARGUMENT"), "limit": (429, "RESOURCE_EXHAUSTED"),
            "ended": (429, "RESOURCE_EXHAUSTED"), "model_failure": (502, "UNAVAILABLE"),
            "stalled": (504, "DEADLINE_EXCEEDED"), "internal": (500, "INTERNAL")}
# The placeholder signatures Gemini's clients put on a call that came without one (Gemini CLI,
# litellm): no reasoning to restore, and nothing to note.
PLACEHOLDERS = {"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")


def error_body(message: str, kind: str) -> dict:
    code, status = STATUSES.get(kind, (500, "INTERNAL"))
    return {"error": {"code": code, "message": message, "status": status}}


def _get(mapping: dict, camel: str):
    """A field by its camelCase name or its snake_case one."""
    if camel in mapping:
        return mapping[camel]
    return mapping.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def json_schema(schema):
    """Gemini's schema (OpenAPI subset, upper-case types, `nullable`) as JSON Schema."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    made = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            made["type"] = value.lower()
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            made[key] = {name: json_schema(v) for name, v in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            made[re.sub(r"_(.)", lambda m: m.group(1).upper(), key)] = json_schema(value)
        elif key in ("any_of", "one_of"):
            made["anyOf" if key == "any_of" else "oneOf"] = json_schema(value)
        elif key == "nullable":
            continue
        elif key in ("propertyOrdering", "property_ordering"):
            continue
        else:
            made[key] = value
    if schema.get("nullable") and isinstance(made.get("type"), str):
        made["type"] = [made["type"], "null"]
    return made


class _Turns:
    def __init__(self):
        self.messages: list[dict] = []
        self.pending: list[tuple[str, str]] = []  # (id, name) of the last model turn's calls not yet answered
        self.notes: list[str] = []

    def model(self, parts: list, where: str) -> None:
        text, thought, calls, signature = [], [], [], None
        for number, part in enumerate(parts):
            if isinstance(part, dict) and signature is None and _get(part, "thoughtSignature"):
                signature = (_get(part, "thoughtSignature"), f"{where}.parts[{number}]")
            call = _get(part, "functionCall") if isinstance(part, dict) else None
            if call is not None:
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise BadRequest(f"{where}.parts[{number}].functionCall needs a name")
                call_id = call.get("id") or f"call_{len(self.messages)}_{len(calls)}"
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": call["name"], "arguments": json.dumps(call.get("args") or {})}})
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                (thought if part.get("thought") else text).append(part["text"])
            elif isinstance(part, dict) and (_get(part, "thoughtSignature") or part.get("thought")):
                continue
            else:
                raise BadRequest(f"{where}.parts[{number}]: a model turn holds text and functionCall parts")
        message: dict = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            message["tool_calls"] = calls
        if thought:
            message["reasoning_content"] = "".join(thought)
        if signature is not None:
            blocks = thinking_blocks(unseal("thinking", signature[0]))
            if blocks:  # the reasoning the gateway sealed in it, signatures and all
                message["thinking_blocks"] = blocks
                message.setdefault("reasoning_content", thinking_text(blocks))
            elif not _placeholder(signature[0]):
                self.notes.append(f"{signature[1]}: a thoughtSignature that this gateway did not issue was dropped")
        self.messages.append(message)
        self.pending = [(c["id"], c["function"]["name"]) for c in calls]

    def user(self, parts: list, where: str) -> None:
        content = []
        for number, part in enumerate(parts):
            at = f"{where}.parts[{number}]"
            if not isinstance(part, dict):
                raise BadRequest(f"{at} must be an object")
            answer = _get(part, "functionResponse")
            inline, linked = _get(part, "inlineData"), _get(part, "fileData")
            if answer is not None:
                if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
                    raise BadRequest(f"{at}.functionResponse needs a name")
                self.messages.append({"role": "tool", "tool_call_id": self._answered(answer),
                                      "content": json.dumps(answer.get("response") or {})})
            elif isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
            elif isinstance(inline, dict):
                url = f"data:{_get(inline, 'mimeType')};base64,{inline.get('data')}"
                content.append({"type": "image_url", "image_url": {"url": url}})
            elif isinstance(linked, dict):
                content.append({"type": "image_url", "image_url": {"url": _get(linked, "fileUri")}})
            else:
                raise BadRequest(f"{at}: a part holds text, inlineData, fileData or functionResponse")
        if content:
            plain = len(content) == 1 and content[0]["type"] == "text"
            self.messages.append({"role": "user", "content": content[0]["text"] if plain else content})

    def _answered(self, answer: dict) -> str:
        """The id of the call a functionResponse answers: its own, else the first pending call of its name."""
        if answer.get("id"):
            self.pending = [p for p in self.pending if p[0] != answer["id"]]
            return answer["id"]
        for index, (call_id, name) in enumerate(self.pending):
            if name == answer["name"]:
                del self.pending[index]
                return call_id
        return f"call_{answer['name']}"


def _placeholder(signature) -> bool:
    """A placeholder signature, as sent (Gemini CLI's JSON) or as base64 of its bytes (Google's SDK)."""
    if not isinstance(signature, str):
        return False
    if signature in PLACEHOLDERS:
        return True
    try:
        return base64.b64decode(str(signature), validate=True).decode() in PLACEHOLDERS
    except (ValueError, UnicodeDecodeError):
        return False


def _system(value) -> str:
    if isinstance(value, str):
        return value
    parts = value.get("parts") if isinstance(value, dict) else value
    if not isinstance(parts, list):
        raise BadRequest("`systemInstruction` must hold parts")
    return "\n".join(str(p.get("text") or "") for p in parts if isinstance(p, dict))


def _tools(tools) -> list[dict] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list")
    made = []
    for index, tool in enumerate(tools):
        declarations = _get(tool, "functionDeclarations") if isinstance(tool, dict) else None
        if not isinstance(declarations, list):
            kinds = ", ".join(tool) if isinstance(tool, dict) else type(tool).__name__
            raise BadRequest(f"tools[{index}] ({kinds}): the gateway serves functionDeclarations only")
        for declaration in declarations:
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                raise BadRequest(f"tools[{index}]: a function declaration needs a name")
            schema = _get(declaration, "parametersJsonSchema")
            if schema is None:
                schema = json_schema(declaration.get("parameters")) if declaration.get("parameters") else \
                    {"type": "object", "properties": {}}
            function = {"name": declaration["name"], "parameters": schema}
            if declaration.get("description"):
                function["description"] = str(declaration["description"])
            made.append({"type": "function", "function": function})
    return made or None


def _tool_choice(config):
    calling = _get(config, "functionCallingConfig") if isinstance(config, dict) else None
    if not isinstance(calling, dict):
        return None
    mode = str(calling.get("mode") or "AUTO").upper()
    allowed = _get(calling, "allowedFunctionNames")
    allowed = [name for name in allowed if isinstance(name, str)] if isinstance(allowed, list) else []
    if mode == "NONE":
        return "none"
    if mode in ("ANY", "VALIDATED"):
        if len(allowed) == 1:
            return {"type": "function", "function": {"name": allowed[0]}}
        return "required"
    return "auto"


def parse(body, model: str | None = None, stream: bool = False, sse: bool = True) -> Ask:
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    turns = _Turns()
    system = _get(body, "systemInstruction")
    if system:
        turns.messages.append({"role": "system", "content": _system(system)})
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("`contents` must be a non-empty list of turns")
    for index, turn in enumerate(contents):
        where = f"contents[{index}]"
        parts = turn.get("parts") if isinstance(turn, dict) else None
        if not isinstance(parts, list):
            raise BadRequest(f"{where} must be an object with a list of parts")
        if turn.get("role") == "model":
            turns.model(parts, where)
        elif turn.get("role") in ("user", "function", None):
            turns.user(parts, where)
        else:
            raise BadRequest(f"{where}: a turn's role must be user or model")
    if len(turns.messages) == (1 if system else 0):
        raise BadRequest("`contents` holds no text, call or response")
    tools = _tools(body.get("tools"))
    return Ask(turns.messages, tools, _tool_choice(_get(body, "toolConfig")) if tools else None, None,
               model=model, stream=stream, extra={"sse": sse}, notes=turns.notes)


def _usage(call) -> dict:
    used = usage_of(call)
    usage = {"promptTokenCount": used["prompt"], "candidatesTokenCount": used["completion"],
             "totalTokenCount": used["prompt"] + used["completion"]}
    if used["cached"]:
        usage["cachedContentTokenCount"] = used["cached"]
    return usage


def _finish(call) -> str:
    return "MAX_TOKENS" if getattr(call, "finish_reason", None) == "length" else "STOP"


def _call_part(call_id: str, name: str, arguments: str) -> dict:
    return {"functionCall": {"id": call_id, "name": name, "args": arguments_object(arguments)}}


def _signed(parts: list[dict], blocks) -> list[dict]:
    """The reply's parts with its reasoning blocks sealed as the thoughtSignature where Gemini puts
    one: on the first function call, else on the last part (a part of its own when all are thoughts)."""
    if not blocks:
        return parts
    signature = seal("thinking", blocks)
    calls = [p for p in parts if "functionCall" in p]
    answer = [p for p in parts if not p.get("thought")]
    if calls or answer:
        (calls or answer)[0 if calls else -1]["thoughtSignature"] = signature
    else:
        parts.append({"text": "", "thoughtSignature": signature})
    return parts


def reply(call, ask: Ask) -> dict:
    message = call.message or {"content": call.response}
    parts = []
    blocks = thinking_blocks(message.get("thinking_blocks"))
    if message.get("reasoning_content") or blocks:
        parts.append({"text": message.get("reasoning_content") or thinking_text(blocks), "thought": True})
    if message.get("content"):
        parts.append({"text": message["content"]})
    parts = _signed(parts + [_call_part(*c) for c in tool_calls(message)], blocks)
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": _finish(call), "index": 0}],
            "usageMetadata": _usage(call), "modelVersion": ask.model or "main", "responseId": new_id("")}


def count_reply(tokens: int) -> dict:
    return {"totalTokens": tokens}


def models_body(tiers) -> dict:
    return {"models": [model_body(t) for t in tiers]}


def model_body(name: str) -> dict:
    return {"name": f"models/{name}", "version": "mlab", "displayName": name, "inputTokenLimit": 1_000_000,
            "outputTokenLimit": 65_536, "supportedGenerationMethods": ["generateContent", "countTokens"]}


class Stream(Encoder):
    """GenerateContentResponse chunks, as server-sent events (`data:` lines) or, without alt=sse, the
    elements of one JSON array; a function call goes out whole when its arguments are complete."""

    def __init__(self, ask: Ask):
        super().__init__(ask)
        self.sse = ask.extra.get("sse", True)
        self.content_type = "text/event-stream" if self.sse else "application/json"
        self.id = new_id("")
        self.chunks = 0
        self.arguments: list[str] = []
        self.call: tuple | None = None
        self.unsent_signature: str | None = None  # the reasoning's, for the next part that is not a thought

    def _chunk(self, document: dict) -> bytes:
        self.chunks += 1
        data = json.dumps(document, separators=(",", ":"))
        if self.sse:
            return f"data: {data}\r\n\r\n".encode()
        return (("[" if self.chunks == 1 else ",\r\n") + data).encode()

    def _parts(self, parts: list, **more) -> bytes:
        if self.unsent_signature and not parts[0].get("thought"):
            parts = [dict(parts[0], thoughtSignature=self.unsent_signature)] + parts[1:]
            self.unsent_signature = None
        candidate = dict({"content": {"role": "model", "parts": parts}, "index": 0}, **more)
        return self._chunk({"candidates": [candidate], "modelVersion": self.ask.model or "main",
                            "responseId": self.id})

    def start(self) -> bytes:
        return b""

    def open_block(self, delta: tuple) -> bytes:
        if delta[0] == "tool":
            self.call, self.arguments = (delta[2] or f"call_{delta[1]}", delta[3] or ""), []
        return b""

    def piece(self, delta: tuple) -> bytes:
        kind = delta[0]
        if kind == "text":
            return self._parts([{"text": delta[1]}])
        if kind == "reasoning":
            return self._parts([{"text": delta[1], "thought": True}])
        if kind == "tool":
            self.arguments.append(delta[4])
        return b""

    def close_block(self, block: tuple) -> bytes:
        if block[0] == "reasoning":
            blocks = self.thinking()
            self.unsent_signature = seal("thinking", blocks) if blocks else None
        if block[0] != "tool" or self.call is None:
            return b""
        part = _call_part(self.call[0], self.call[1], "".join(self.arguments))
        self.call = None
        return self._parts([part])

    def end(self, call) -> bytes:
        last = {"text": ""}
        if self.unsent_signature:  # all the reply was thought: the signature on the last part
            last["thoughtSignature"], self.unsent_signature = self.unsent_signature, None
        document = {"candidates": [{"content": {"role": "model", "parts": [last]}, "finishReason": _finish(call),
                                    "index": 0}],
                    "usageMetadata": _usage(call), "modelVersion": self.ask.model or "main", "responseId": self.id}
        return self._chunk(document) + (b"" if self.sse else b"]")

    def error(self, message: str, kind: str) -> bytes:
        return self._chunk(error_body(message, kind)) + (b"" if self.sse else b"]")
