"""The wire protocols (dialects) the model gateway speaks, one module each.

Every dialect turns its request into an `Ask` (the conversation in OpenAI chat form, which is what
the run's ModelClient sends through litellm) and the reply back into its own shape: a body, a
stream of events (`Encoder`), an error. The gateway (external/gateway.py) routes by path, checks
the limits, calls the model, meters and records in one place, whatever the dialect.

A stream is driven by neutral deltas, as the client reads them from the upstream (or made from a
whole reply when the upstream does not stream):

    ("text", piece)                         a piece of the reply's text
    ("reasoning", piece)                    a piece of the model's reasoning (thinking)
    ("signature", text)                     the signature of the reasoning (Anthropic)
    ("tool", index, id, name, piece)        a piece of tool call `index`'s arguments (id and name
                                            on its first piece, None after)

Error kinds, which each dialect words as its own error type: invalid, auth, not_found, too_large,
limit, ended, model_failure, stalled, internal.

Reasoning state. The conversation keeps the model's reasoning as the model client sends it back
upstream: `reasoning_content` (its text) and `thinking_blocks` (the provider's blocks with their
signatures, which litellm echoes to the provider). Anthropic has the blocks themselves; the
dialects that carry reasoning state as an opaque value (a Responses reasoning item's
`encrypted_content`, a Gemini part's `thoughtSignature`) get the blocks `seal`ed: base64 of a small
JSON document naming what it holds, which the agent sends back unchanged and `unseal` reads. A
value the gateway did not issue (another server's encrypted reasoning) cannot be read: it is
dropped, and the exchange's record says so (`Ask.notes`).
"""
from __future__ import annotations

import base64
import binascii
import json
import secrets
from dataclasses import dataclass, field

STATUS = {"invalid": 400, "auth": 401, "not_found": 404, "too_large": 413, "limit": 429, "ended": 429,
          "model_failure": 502, "stalled": 504, "internal": 500}


class BadRequest(Exception):
    """A request the dialect cannot serve: answered with its 400 error, never recorded."""


@dataclass
class Ask:
    """One request of any dialect, as the model client takes it."""

    messages: list[dict]
    tools: list[dict] | None = None
    tool_choice: object = None
    parallel_tool_calls: bool | None = None
    model: str | None = None       # the model name the agent asked for (recorded; the tier model answers)
    stream: bool = False
    extra: dict = field(default_factory=dict)  # what the dialect's reply echoes (instructions, tools as sent)
    notes: list = field(default_factory=list)  # what the gateway dropped or changed in the request (recorded)
    compaction: bool = False       # the agent asked for its conversation to be compacted (Responses)


def seal(kind: str, value) -> str:
    """State the agent is to send back unchanged (reasoning blocks, a compaction's summary), as
    base64 text (Gemini's SDK reads a thoughtSignature as base64 bytes)."""
    document = json.dumps({"mlab": kind, "value": value}, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(document.encode()).decode()


def unseal(kind: str, text):
    """What `seal(kind, ...)` made of `text` (base64 or its URL-safe form); None when the gateway did
    not issue it."""
    from mlab.models.decode import loads

    if not isinstance(text, str) or not text:
        return None
    try:
        raw = base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4), validate=True)
        document = loads(raw.decode("utf-8"), what="sealed state", max_chars=len(raw))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    return document.get("value") if isinstance(document, dict) and document.get("mlab") == kind else None


def thinking_blocks(value) -> list[dict] | None:
    """Reasoning blocks as unsealed: a non-empty list of thinking or redacted_thinking blocks, else None."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking") for b in value):
        return None
    return value


def thinking_text(blocks) -> str:
    return "".join(str(b.get("thinking") or "") for b in blocks or [] if isinstance(b, dict))


def new_id(prefix: str) -> str:
    return prefix + secrets.token_hex(12)


def arguments_object(text) -> dict:
    """A tool call's arguments (JSON text) as the object the dialects that want one (Anthropic,
    Gemini) send; text that is not a JSON object is kept whole under "arguments"."""
    if isinstance(text, dict):
        return text
    if not text or not str(text).strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}


def message_deltas(message: dict) -> list[tuple]:
    """The deltas of a whole assistant message, in the order a stream sends them."""
    deltas: list[tuple] = []
    if message.get("reasoning_content"):
        deltas.append(("reasoning", message["reasoning_content"]))
    for block in message.get("thinking_blocks") or []:
        if isinstance(block, dict) and block.get("signature"):
            deltas.append(("signature", block["signature"]))
            break
    if message.get("content"):
        deltas.append(("text", message["content"]))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        deltas.append(("tool", index, call.get("id") or f"call_{index}", function.get("name") or "",
                       function.get("arguments") or ""))
    return deltas


def tool_calls(message: dict) -> list[tuple[str, str, str]]:
    """(id, name, arguments text) of each tool call of an assistant message."""
    found = []
    for index, call in enumerate((message or {}).get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        found.append((call.get("id") or f"call_{index}", function.get("name") or "", arguments))
    return found


def sse(data: dict, event: str | None = None) -> bytes:
    """One server-sent event (with an `event:` line where the dialect names its events)."""
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data, separators=(",", ":")) + "\n\n").encode()


class Encoder:
    """A reply as a stream of events: `start()`, `delta(d)` for each delta, then `finish(call)`, or
    `error(...)` instead. Subclasses open and close blocks (text, reasoning, one per tool call)."""

    def __init__(self, ask: Ask):
        self.ask = ask
        self.open: tuple | None = None   # the block being streamed: ("text",), ("reasoning",), ("tool", index)
        self.sent = False                # a delta went out (else the finish synthesises the whole reply)
        self.whole_thinking = None       # a whole reply's reasoning blocks (a stream's are its pieces)
        self.reasoning: list[str] = []   # a streamed reasoning's text and signature, for the dialects
        self.signature = ""              # that seal them

    def start(self) -> bytes:
        return b""

    def delta(self, delta: tuple) -> bytes:
        self.sent = True
        kind = delta[0]
        block = ("tool", delta[1]) if kind == "tool" else ("reasoning",) if kind == "signature" else (kind,)
        out = b""
        if block != self.open:
            if kind == "signature":
                return b""  # a signature after its reasoning was closed: nothing to sign now
            if self.open is not None:
                out += self.close_block(self.open)
            self.open = block
            out += self.open_block(delta)
            if kind == "tool":  # the opening event carries the id and name; its arguments follow
                return out + (self.piece(delta) if delta[4] else b"")
        if kind == "reasoning":
            self.reasoning.append(delta[1])
        elif kind == "signature":
            self.signature += delta[1]
        return out + self.piece(delta)

    def finish(self, call) -> bytes:
        out = b""
        if not self.sent:
            self.whole_thinking = thinking_blocks((call.message or {}).get("thinking_blocks"))
            for delta in message_deltas(call.message or {"content": call.response}):
                if delta[0] == "tool":
                    delta = delta[:4] + (self.whole_arguments(delta[4]),)
                out += self.delta(delta)
        if self.open is not None:
            out += self.close_block(self.open)
            self.open = None
        return out + self.end(call)

    def thinking(self) -> list[dict] | None:
        """The reasoning blocks of the reply streamed so far: a whole reply's, else one made of the
        streamed reasoning and its signature (None without a signature: nothing to send back)."""
        if self.whole_thinking:
            return self.whole_thinking
        if self.signature:
            return [{"type": "thinking", "thinking": "".join(self.reasoning), "signature": self.signature}]
        return None

    def whole_arguments(self, text: str) -> str:
        """A whole tool call's arguments as this dialect streams them (a JSON object where it wants one)."""
        return text

    # what a dialect writes
    def open_block(self, delta: tuple) -> bytes:
        raise NotImplementedError

    def piece(self, delta: tuple) -> bytes:
        raise NotImplementedError

    def close_block(self, block: tuple) -> bytes:
        raise NotImplementedError

    def end(self, call) -> bytes:
        raise NotImplementedError

    def error(self, message: str, kind: str) -> bytes:
        raise NotImplementedError


def usage_of(call) -> dict:
    """The call's tokens: prompt (cache reads and writes included), completion, cache reads and writes."""
    return {"prompt": int(call.prompt_tokens or 0), "completion": int(call.completion_tokens or 0),
            "cached": int(getattr(call, "cached_tokens", 0) or 0),
            "cache_write": int(getattr(call, "cache_write_tokens", 0) or 0)}
