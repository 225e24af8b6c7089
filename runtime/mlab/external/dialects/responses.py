"""OpenAI Responses: `POST /v1/responses` (Codex CLI, always streamed).

In: `instructions`, `input` (a text, or items: messages with input_text / output_text /
input_image parts, function_call, function_call_output, reasoning, custom_tool_call and its
output), `tools` (function tools; custom tools, such as Codex's freeform apply_patch, are passed
as a function taking one text `input`), `tool_choice`, `parallel_tool_calls`. Out: a response
object whose `output` holds a reasoning item (its summary), a message with output_text, and a
function_call (or custom_tool_call) per tool call; usage as input_tokens (with
input_tokens_details.cached_tokens), output_tokens, total_tokens. The stream: response.created,
response.in_progress, per item response.output_item.added ... response.output_item.done with the
text, reasoning-summary and function-call-arguments events between, then response.completed; an
error is response.failed. The gateway keeps no responses: `previous_response_id` is refused
(send the whole input, as Codex does with `store: false`).
"""
from __future__ import annotations

import json
import time

from mlab.external.dialects import (Ask, BadRequest, Encoder, new_id, seal, sse, thinking_blocks, thinking_text,
                                    tool_calls, unseal, usage_of)

NAME = "responses"
ERROR_CODES = {"invalid": "invalid_request_error", "auth": "invalid_api_key", "not_found": "not_found",
               "too_large": "invalid_request_error", "limit": "rate_limit_exceeded", "ended": "rate_limit_exceeded",
               "model_failure": "server_error", "stalled": "server_error", "internal": "server_error"}
# Compaction (POST /v1/responses/compact, or an input ending with a compaction_trigger item): the
# run's model summarises the conversation (one exchange, metered and recorded as any), and the
# summary goes back sealed in a compaction item, which becomes a user message when it is sent back.
COMPACT_PROMPT = ("Summarise this conversation for a continuation that will see only your summary: the task, what "
                  "has been done and found, the decisions made and why, the state of the files, and the next "
                  "steps. Be concise and keep every detail the work depends on.")
COMPACTED = "A summary of the conversation so far, which was compacted:\n\n"
CUSTOM_INPUT = {"type": "object", "properties": {"input": {"type": "string", "description": "the tool's input"}},
                "required": ["input"]}


def error_body(message: str, kind: str) -> dict:
    code = ERROR_CODES.get(kind, "server_error")
    return {"error": {"message": message, "type": code, "code": code, "param": None}}


def _text_part(part, where: str):
    if isinstance(part, str):
        return {"type": "text", "text": part}
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
        return {"type": "text", "text": str(part.get("text") or "")}
    if kind == "input_image":
        url = part.get("image_url") or part.get("file_id")
        if not isinstance(url, str):
            raise BadRequest(f"{where}: an input_image needs an image_url")
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "refusal":
        return {"type": "text", "text": str(part.get("refusal") or "")}
    raise BadRequest(f"{where}: a content part of type {kind!r} is not supported (input_text, output_text, "
                     "input_image)")


def _content(content, where: str):
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a text or a list of content parts")
    parts = [_text_part(part, f"{where}.content[{i}]") for i, part in enumerate(content)]
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts) if len(parts) == 1 else \
            "\n".join(p["text"] for p in parts)
    return parts


def _output_text(output) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(p.get("text") or "" for p in output if isinstance(p, dict))
    return json.dumps(output)


class _Conversation:
    """Input items folded into OpenAI messages: an assistant's text, reasoning and calls that follow
one another join one assistant message; a user message or a tool result starts the next turn."""

    def __init__(self):
        self.messages: list[dict] = []
        self.reasoning: list[str] = []
        self.thinking: list[dict] = []   # reasoning blocks unsealed from encrypted_content, for the next turn
        self.notes: list[str] = []
        self.compaction = False          # the input ends with a compaction_trigger

    def assistant(self) -> dict:
        last = self.messages[-1] if self.messages else None
        if last is None or last.get("role") != "assistant":
            last = {"role": "assistant", "content": None}
            self.messages.append(last)
        if self.reasoning:
            last["reasoning_content"] = (last.get("reasoning_content") or "") + "".join(self.reasoning)
            self.reasoning = []
        if self.thinking:
            last["thinking_blocks"] = (last.get("thinking_blocks") or []) + self.thinking
            self.thinking = []
        return last

    def reasoning_item(self, item: dict, where: str) -> None:
        """A reasoning item sent back: its summary (or its reasoning text) is the reasoning's text;
        its encrypted_content, when the gateway sealed it, the provider's blocks with their signatures."""
        def texts_of(parts) -> list:
            return [p.get("text") or "" for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []

        texts = texts_of(item.get("summary")) or texts_of(item.get("content"))
        if not any(texts):
            texts = texts_of(item.get("content"))
        sealed = item.get("encrypted_content")
        blocks = thinking_blocks(unseal("thinking", sealed))
        if blocks:
            self.thinking += blocks
            texts = texts if any(texts) else [thinking_text(blocks)]
        elif sealed:
            self.notes.append(f"{where}: a reasoning item's encrypted_content that this gateway did not issue was "
                              "dropped (its summary is kept)")
        if any(texts):
            self.reasoning.append("".join(str(t) for t in texts))

    def compaction_item(self, item: dict, where: str) -> None:
        """A compaction item sent back: the summary the gateway sealed in it, as a user message."""
        summary = unseal("compaction", item.get("encrypted_content"))
        if isinstance(summary, str):
            self.messages.append({"role": "user", "content": COMPACTED + summary})
        else:
            self.notes.append(f"{where}: a compaction item that this gateway did not issue was dropped")

    def add(self, item, index: int, last: bool = False) -> None:
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise BadRequest(f"{where} must be an object")
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise BadRequest(f"{where}: a message's role must be user, assistant, system or developer")
            content = _content(item.get("content"), where)
            if role == "assistant":
                message = self.assistant()
                text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
                message["content"] = (message.get("content") or "") + text
            else:
                self.messages.append({"role": "system" if role == "developer" else role, "content": content})
        elif kind in ("function_call", "custom_tool_call"):
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
                raise BadRequest(f"{where}: a {kind} needs a text call_id and name")
            arguments = item.get("arguments") if kind == "function_call" else json.dumps({"input": item.get("input")})
            self.assistant().setdefault("tool_calls", []).append(
                {"id": item["call_id"], "type": "function",
                 "function": {"name": item["name"], "arguments": arguments if isinstance(arguments, str) else
                              json.dumps(arguments)}})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            if not isinstance(item.get("call_id"), str):
                raise BadRequest(f"{where}: a {kind} needs a text call_id")
            self.messages.append({"role": "tool", "tool_call_id": item["call_id"],
                                  "content": _output_text(item.get("output"))})
        elif kind == "reasoning":
            self.reasoning_item(item, where)
        elif kind == "compaction":
            self.compaction_item(item, where)
        elif kind == "compaction_trigger":
            if not last:
                raise BadRequest(f"{where}: a compaction_trigger must be the last input item")
            self.compaction = True
        else:
            raise BadRequest(f"{where}: an input item of type {kind!r} is not supported (message, function_call, "
                             "function_call_output, reasoning, custom_tool_call, custom_tool_call_output, "
                             "compaction, compaction_trigger)")


def _tools(tools) -> tuple[list[dict] | None, list[str]]:
    """The function tools in OpenAI chat form, and the names of the custom (freeform) ones."""
    if tools is None:
        return None, []
    if not isinstance(tools, list):
        raise BadRequest("`tools` must be a list of tool definitions")
    made, custom = [], []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise BadRequest(f"tools[{index}] must be an object with a type and a name")
        kind = tool.get("type")
        if kind == "function":
            function = {"name": tool["name"], "parameters": tool.get("parameters") or {"type": "object"}}
        elif kind == "custom":
            custom.append(tool["name"])
            function = {"name": tool["name"], "parameters": CUSTOM_INPUT}
        else:
            raise BadRequest(f"tools[{index}] ({tool['name']}): the tool type {kind!r} is not served by the gateway "
                             "(function and custom tools are)")
        if tool.get("description"):
            function["description"] = str(tool["description"])
        made.append({"type": "function", "function": function})
    return made or None, custom


def _tool_choice(choice):
    if choice is None or choice in ("auto", "required", "none"):
        return choice
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom") and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    raise BadRequest("`tool_choice` must be auto, required, none or {\"type\": \"function\", \"name\": ...}")


def _user_item(item: dict) -> dict:
    """A user message of the input as an output item (what /v1/responses/compact lists before its summary)."""
    content = item.get("content")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    return {"type": "message", "id": item.get("id") or new_id("msg_"), "status": "completed", "role": "user",
            "content": content}


def parse(body, compact: bool = False) -> Ask:
    """A Responses request as an Ask; `compact`: a request to POST /v1/responses/compact, which is
    answered whole, as a request whose input ends with a compaction_trigger is."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    if body.get("previous_response_id"):
        raise BadRequest("the gateway keeps no responses: send the whole conversation in `input` "
                         "(previous_response_id is not supported)")
    conversation = _Conversation()
    if body.get("instructions"):
        conversation.messages.append({"role": "system", "content": _content(body["instructions"], "instructions")})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise BadRequest("`input` must be a text or a non-empty list of input items")
    for index, item in enumerate(items):
        conversation.add(item, index, last=index == len(items) - 1)
    if conversation.reasoning or conversation.thinking:  # reasoning last: kept on an assistant turn of its own
        conversation.assistant()
    messages = conversation.messages
    if not messages:
        raise BadRequest("`input` holds no message")
    tools, custom = _tools(body.get("tools"))
    compaction = compact or conversation.compaction
    if compaction:  # the run's model writes the summary: no tools, the request's last message asks for it
        messages.append({"role": "user", "content": COMPACT_PROMPT})
        tools = None
    kept = [_user_item(item) for item in items if isinstance(item, dict) and item.get("role") == "user"
            and (item.get("type") or "message") == "message"] if compact else []
    return Ask(messages, tools, _tool_choice(body.get("tool_choice")) if tools else None,
               body.get("parallel_tool_calls") if tools else None,
               model=body.get("model") if isinstance(body.get("model"), str) else None,
               stream=bool(body.get("stream")) and not compact, notes=conversation.notes, compaction=compaction,
               extra={"custom": custom, "instructions": body.get("instructions"), "tools": body.get("tools") or [],
                      "tool_choice": body.get("tool_choice") or "auto", "compact": compact, "kept": kept,
                      "parallel_tool_calls": body.get("parallel_tool_calls", True)})


def _usage(call) -> dict:
    used = usage_of(call)
    details = {"cached_tokens": used["cached"]}
    if used["cache_write"]:
        details["cache_write_tokens"] = used["cache_write"]
    return {"input_tokens": used["prompt"], "input_tokens_details": details,
            "output_tokens": used["completion"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": used["prompt"] + used["completion"]}


def _call_item(ask: Ask, call_id: str, name: str, arguments: str, status: str = "completed") -> dict:
    if name in ask.extra.get("custom", ()):
        parsed = _loads(arguments)
        value = parsed["input"] if parsed is not None and "input" in parsed else arguments
        return {"type": "custom_tool_call", "id": "ctc_" + call_id, "call_id": call_id, "name": name,
                "input": value if isinstance(value, str) else json.dumps(value), "status": status}
    return {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": name, "arguments": arguments,
            "status": status}


def _loads(text: str):
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _envelope(ask: Ask, response_id: str, status: str, output: list, usage=None) -> dict:
    return {"id": response_id, "object": "response", "created_at": int(time.time()), "status": status,
            "model": ask.model or "main", "output": output, "usage": usage, "error": None,
            "incomplete_details": None, "instructions": ask.extra.get("instructions"), "metadata": {},
            "parallel_tool_calls": ask.extra.get("parallel_tool_calls", True), "temperature": None, "top_p": None,
            "tool_choice": ask.extra.get("tool_choice", "auto"), "tools": ask.extra.get("tools", []),
            "text": {"format": {"type": "text"}}, "reasoning": None, "store": False, "truncation": "disabled"}


def _reasoning_item(text: str, blocks) -> dict:
    item = {"type": "reasoning", "id": new_id("rs_"), "summary": [{"type": "summary_text", "text": text}]}
    if blocks:
        item["encrypted_content"] = seal("thinking", blocks)
    return item


def _compaction_item(summary: str) -> dict:
    return {"type": "compaction", "id": new_id("cmp_"), "encrypted_content": seal("compaction", summary)}


def _output(call, ask: Ask) -> list[dict]:
    message = call.message or {"content": call.response}
    if ask.compaction:
        return [_compaction_item(message.get("content") or call.response or "")]
    output: list[dict] = []
    blocks = thinking_blocks(message.get("thinking_blocks"))
    if message.get("reasoning_content") or blocks:
        output.append(_reasoning_item(message.get("reasoning_content") or thinking_text(blocks), blocks))
    if message.get("content"):
        output.append({"type": "message", "id": new_id("msg_"), "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
    for call_id, name, arguments in tool_calls(message):
        output.append(_call_item(ask, call_id, name, arguments))
    return output


def reply(call, ask: Ask) -> dict:
    if ask.extra.get("compact"):  # POST /v1/responses/compact: the user messages, then the compaction item
        return {"id": new_id("resp_"), "object": "response.compaction", "created_at": int(time.time()),
                "output": list(ask.extra.get("kept") or []) + _output(call, ask), "usage": _usage(call)}
    return _envelope(ask, new_id("resp_"), "completed", _output(call, ask), _usage(call))


class Stream(Encoder):
    """response.created and response.in_progress; per output item its added, delta, done events;
    response.completed with the whole response (or response.failed)."""

    def __init__(self, ask: Ask):
        super().__init__(ask)
        self.id = new_id("resp_")
        self.number = 0
        self.items: list[dict] = []     # the output so far, as response.completed lists it
        self.current: dict | None = None
        self.pieces: list[str] = []

    def _event(self, kind: str, **fields) -> bytes:
        self.number += 1
        return sse(dict(type=kind, sequence_number=self.number, **fields), kind)

    def delta(self, delta: tuple) -> bytes:
        if self.ask.compaction:  # the summary goes out whole, sealed, at the end
            self.sent = True
            if delta[0] == "text":
                self.pieces.append(delta[1])
            return b""
        return super().delta(delta)

    def finish(self, call) -> bytes:
        if not self.ask.compaction:
            return super().finish(call)
        summary = "".join(self.pieces) if self.sent else (call.message or {}).get("content") or call.response or ""
        item, index = _compaction_item(summary), len(self.items)
        self.items.append(item)
        return self._event("response.output_item.added", output_index=index, item=dict(item, encrypted_content="")) + \
            self._event("response.output_item.done", output_index=index, item=item) + self.end(call)

    def start(self) -> bytes:
        response = _envelope(self.ask, self.id, "in_progress", [])
        return self._event("response.created", response=response) + \
            self._event("response.in_progress", response=response)

    def open_block(self, delta: tuple) -> bytes:
        kind, index = delta[0], len(self.items)
        self.pieces = []
        if kind == "text":
            item = {"type": "message", "id": new_id("msg_"), "status": "in_progress", "role": "assistant",
                    "content": []}
            self.current = item
            part = {"type": "output_text", "text": "", "annotations": []}
            return self._event("response.output_item.added", output_index=index, item=item) + \
                self._event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                            part=part)
        if kind == "tool":
            item = _call_item(self.ask, delta[2] or f"call_{delta[1]}", delta[3] or "", "", "in_progress")
            self.current = item
            return self._event("response.output_item.added", output_index=index, item=item)
        item = {"type": "reasoning", "id": new_id("rs_"), "summary": []}
        self.current = item
        return self._event("response.output_item.added", output_index=index, item=item) + \
            self._event("response.reasoning_summary_part.added", item_id=item["id"], output_index=index,
                        summary_index=0, part={"type": "summary_text", "text": ""})

    def piece(self, delta: tuple) -> bytes:
        kind, item, index = delta[0], self.current, len(self.items)
        if kind == "text":
            self.pieces.append(delta[1])
            return self._event("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                               delta=delta[1], logprobs=[])
        if kind == "reasoning":
            self.pieces.append(delta[1])
            return self._event("response.reasoning_summary_text.delta", item_id=item["id"], output_index=index,
                               summary_index=0, delta=delta[1])
        if kind == "tool" and delta[4]:
            self.pieces.append(delta[4])
            if item["type"] == "custom_tool_call":
                return b""  # a freeform tool's input goes out whole when it is complete
            return self._event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                               delta=delta[4])
        return b""

    def close_block(self, block: tuple) -> bytes:
        item, index, text = self.current, len(self.items), "".join(self.pieces)
        out = b""
        if block[0] == "text":
            part = {"type": "output_text", "text": text, "annotations": []}
            out += self._event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                               text=text, logprobs=[])
            out += self._event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                               part=part)
            item = dict(item, status="completed", content=[part])
        elif block[0] == "tool":
            item = _call_item(self.ask, item["call_id"], item["name"], text)
            if item["type"] == "custom_tool_call":
                out += self._event("response.custom_tool_call_input.delta", item_id=item["id"], output_index=index,
                                   delta=item["input"])
                out += self._event("response.custom_tool_call_input.done", item_id=item["id"], output_index=index,
                                   input=item["input"])
            else:
                out += self._event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                                   name=item["name"], arguments=text)
        else:
            part = {"type": "summary_text", "text": text}
            out += self._event("response.reasoning_summary_text.done", item_id=item["id"], output_index=index,
                               summary_index=0, text=text)
            out += self._event("response.reasoning_summary_part.done", item_id=item["id"], output_index=index,
                               summary_index=0, part=part)
            item = dict(item, summary=[part])
            blocks = self.thinking()
            if blocks:
                item["encrypted_content"] = seal("thinking", blocks)
        self.items.append(item)
        self.current = None
        return out + self._event("response.output_item.done", output_index=index, item=item)

    def end(self, call) -> bytes:
        return self._event("response.completed", response=_envelope(self.ask, self.id, "completed", self.items,
                                                                    _usage(call)))

    def error(self, message: str, kind: str) -> bytes:
        response = _envelope(self.ask, self.id, "failed", self.items)
        response["error"] = {"code": ERROR_CODES.get(kind, "server_error"), "message": message}
        return self._event("response.failed", response=response)
