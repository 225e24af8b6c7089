"""The model gateway of an external run: an OpenAI-compatible chat-completions endpoint on a Unix socket.

The agent inside the sandbox reaches it through the relay (external/relay.py) at
http://127.0.0.1:PORT/v1; the gateway forwards each call to the run's tier model through the run's
ModelClient (so every litellm provider, --api-base and the offline `mlab/` models work), counts
tokens and cost, and enforces the step, token and cost limits: a call past a limit gets an error
response, and the run ends with the limit's failure mode. Each exchange is one trace step (the
request's messages and tools, the reply, tokens, cost) with a workspace snapshot.

The agent authenticates with the run's dummy key; provider keys stay in the harness.

What the agent sends is bounded before it is decoded, on every route (`_Handler._read_json`): a
body must declare its length, at most MAX_REQUEST_BYTES (past it: 413, the body left unread); it
is decoded by the one bounded decoder (mlab.models.decode: nesting past MAX_JSON_DEPTH is a 400);
and at most MAX_READING requests are read and held at once, from their first byte of body to
their reply, the others waiting with their bodies unread in their sockets (exchanges run one at
a time anyway). API keys are compared as bytes, whatever the header holds. Validate Submission
runs one call at a time per run (`Gateway.validating`), the others waiting their turn.

On the call's path, besides the model call: one JSON decode of the request, the limits, the
trace record (the workspace snapshot and one write() of the record) and one JSON encode of the
reply, sent in one write (headers and body together). The record's fsync comes after the reply
is sent (`after_reply`): a killed harness keeps the written record, and a machine crash loses at
most the exchange the agent was answered just then, which a resume redoes.
"""
from __future__ import annotations

import json
import os
import secrets
import socketserver
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Callable

from mlab.failure import FailureMode
from mlab.models import decode
from mlab.models.client import TIERS, ModelError, Usage

MAX_REQUEST_BYTES = 16 << 20  # a request body larger than this is refused, not read
MAX_READING = 2  # request bodies read and held at once: one being answered, one waiting for it


@dataclass
class GatewayEnd:
    """Why the gateway ended the run: a limit, or a model failure."""

    end_reason: str           # steps_limit, tokens_limit, cost_limit or failed
    failure_mode: str
    detail: str


class Gateway:
    """Serves /v1/chat/completions for one run session; `record(request, call, text)` writes each step."""

    def __init__(self, socket_path: str, client, limits: dict, record: Callable, usage: Usage, calls_before: int,
                 on_end: Callable[[GatewayEnd], None], validate: Callable[[], str] | None = None,
                 after_reply: Callable[[], None] | None = None):
        self.socket_path = socket_path
        self.client = client
        self.limits = limits          # steps (model calls), tokens, cost: None where none
        self.record = record
        self.usage = usage
        self.calls = calls_before     # exchanges recorded so far (a resumed run counts its earlier ones)
        self.on_end = on_end
        self.validate = validate      # the task's Validate Submission, for the sandbox's `validate` command
        self.after_reply = after_reply  # after a recorded exchange's reply is sent: the trace's fsync
        self.recorded = False         # an exchange was recorded and its reply not yet sent
        self.key = "mlab-run-" + secrets.token_hex(16)
        self.ended: GatewayEnd | None = None
        self.lock = threading.Lock()  # one exchange at a time: the trace is a sequence
        self.reading = threading.BoundedSemaphore(MAX_READING)  # bodies read and held at once
        self.validating = threading.Lock()  # one Validate Submission at a time: one child process
        self.server: _Server | None = None
        self.thread: threading.Thread | None = None

    # -- serving -----------------------------------------------------------------------
    def start(self) -> None:
        self.server = _Server(self.socket_path, _Handler)
        self.server.gateway = self
        os.chmod(self.socket_path, 0o666)  # the sandbox's uid connects to it
        self.thread = threading.Thread(target=self.server.serve_forever, name="mlab-gateway", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass

    # -- one exchange --------------------------------------------------------------------
    def limit_reached(self) -> str | None:
        steps, tokens, cost = (self.limits.get(k) for k in ("steps", "tokens", "cost"))
        if steps is not None and self.calls >= steps:
            return "steps"
        if tokens is not None and self.usage.total_tokens >= tokens:
            return "tokens"
        if cost is not None and self.usage.cost is not None and self.usage.cost >= cost:
            return "cost"
        calls = self.limits.get("calls")  # each exchange is one model call
        if calls is not None and self.calls >= calls:
            return "calls"
        return None

    def _end(self, end: GatewayEnd) -> None:
        if self.ended is None:
            self.ended = end
            self.on_end(end)

    def exchange(self, request: dict) -> tuple[int, dict]:
        """(HTTP status, JSON body) for one chat-completions request."""
        problem = _bad_request(request)
        if problem:
            return 400, _error(problem, "invalid_request_error")
        with self.lock:
            if self.ended is not None:
                return 429 if self.ended.end_reason.endswith("_limit") else 502, \
                    _error(f"the run has ended: {self.ended.detail}", "mlab_run_ended")
            limit = self.limit_reached()
            if limit:
                detail = f"the run's {limit} limit ({self.limits[limit]:g}) is used up"
                self._end(GatewayEnd(f"{limit}_limit", FailureMode.LIMIT_REACHED, detail))
                return 429, _error(detail, "mlab_limit_reached")
            tier = tier_of(request.get("model"))
            tools = request.get("tools") or None
            started = time.time()
            try:
                call = self.client.chat(tier, request["messages"], tools=tools, tool_choice=request.get("tool_choice"),
                                        parallel_tool_calls=request.get("parallel_tool_calls"),
                                        purpose="external")
            except ModelError as failure:
                self._end(GatewayEnd("failed", failure.failure_mode, str(failure)))
                return 502, _error(str(failure), "mlab_model_failure")
            self.calls += 1
            self.usage.add(call.to_json())
            self.record(request, call, started)
            self.recorded = True
            return 200, completion_body(call, request.get("model") or tier)

    def replied(self) -> None:
        """The reply of an exchange is sent: sync what it recorded (off the agent's call path)."""
        with self.lock:
            if self.after_reply is not None and self.recorded:
                self.recorded = False
                try:
                    self.after_reply()
                except Exception:  # noqa: BLE001 - a trace that cannot be written fails the next record
                    pass


def tier_of(model) -> str:
    """The tier a request's model name selects: main, fast or edit (any provider prefix dropped); main otherwise."""
    name = str(model or "").rsplit("/", 1)[-1].strip().lower()
    return name if name in TIERS else "main"


def _bad_request(request) -> str | None:
    if not isinstance(request, dict):
        return "the request body must be a JSON object"
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return "`messages` must be a non-empty list of message objects"
    tools = request.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        return "`tools` must be a list of tool objects"
    return None


def _error(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "code": kind}}


def completion_body(call, model: str) -> dict:
    """The OpenAI chat.completion object for one call."""
    message = dict(call.message or {"role": "assistant", "content": call.response})
    message.setdefault("role", "assistant")
    calls = message.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [{"id": c.get("id") or f"call_{i}", "type": "function",
                                  "function": {"name": c["function"]["name"] if "function" in c else c.get("name"),
                                               "arguments": _arguments(c)}} for i, c in enumerate(calls)]
    else:
        message.pop("tool_calls", None)
    return {"id": "chatcmpl-" + secrets.token_hex(8), "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
                      "total_tokens": call.prompt_tokens + call.completion_tokens}}


def _arguments(tool_call: dict) -> str:
    arguments = (tool_call.get("function") or {}).get("arguments", tool_call.get("arguments", "{}"))
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def stream_chunks(body: dict) -> list[dict]:
    """A completion as the two chunks of a stream (the whole message, then the finish reason)."""
    choice = body["choices"][0]
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(delta["tool_calls"])]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    return [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
                 usage=body["usage"])]


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    gateway: Gateway


class _BadBody(Exception):
    """A request body refused before or while it was decoded: (status, message)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    # buffered: a reply's status line, headers and body leave in one write (the base class flushes
    # after each request), one segment through the relay instead of two
    wbufsize = 1 << 16

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # the trace records every exchange; nothing goes to the harness's stderr

    def address_string(self) -> str:
        return "sandbox"

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        gateway = self.server.gateway
        given = self.headers.get("Authorization", "").removeprefix("Bearer ").strip() or \
            self.headers.get("api-key", "").strip() or self.headers.get("x-api-key", "").strip()
        # as bytes: headers arrive as Latin-1 text, and compare_digest refuses non-ASCII text
        if secrets.compare_digest(given.encode("utf-8", "surrogateescape"), gateway.key.encode()):
            return True
        self._send(401, _error("unknown API key: use the key mlab gave this run (OPENAI_API_KEY)",
                               "invalid_api_key"))
        return False

    def do_GET(self):  # noqa: N802 - http.server's name
        if not self._authorised():
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": t, "object": "model", "owned_by": "mlab"}
                                                        for t in TIERS]})
        else:
            self._send(404, _error(f"no such endpoint {self.path}; the gateway serves /v1/chat/completions",
                                   "not_found"))

    def _read_json(self):
        """The request's body decoded within the bounds, or _BadBody. The caller holds one of the
        gateway's reading slots."""
        if self.headers.get("Transfer-Encoding"):
            raise _BadBody(411, "the request must declare its Content-Length (no Transfer-Encoding)")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_REQUEST_BYTES:
            raise _BadBody(413, f"the request must declare a Content-Length of at most {MAX_REQUEST_BYTES} bytes")
        data = self.rfile.read(length)
        if len(data) < length:
            raise _BadBody(400, "the request body ended before its Content-Length")
        try:
            return decode.loads(data.decode("utf-8") if data else "null", what="the request body",
                                max_chars=MAX_REQUEST_BYTES)
        except ValueError as problem:   # not UTF-8, not JSON, too large or too deep
            raise _BadBody(400, f"the request body is not JSON within the bounds: {problem}") from None

    def _refuse(self, bad: _BadBody) -> None:
        self._send(bad.status, _error(str(bad), "invalid_request_error"))
        self.close_connection = True   # what is left of the body is not read as a next request

    def do_POST(self):  # noqa: N802 - http.server's name
        if not self._authorised():
            return
        gateway = self.server.gateway
        if self.path.rstrip("/") == "/mlab/validate" and gateway.validate is not None:
            with gateway.reading:
                try:
                    self._read_json()
                except _BadBody as bad:
                    self._refuse(bad)
                    return
            with gateway.validating:   # one scoring child at a time: the others wait their turn
                try:
                    text = gateway.validate()
                except Exception as error:  # a broken check is the agent's observation, never a crash
                    text = f"the submission could not be validated: {type(error).__name__}: {error}"
            self._send(200, {"text": text})
            return
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, _error(f"no such endpoint {self.path}; the gateway serves /v1/chat/completions",
                                   "not_found"))
            self.close_connection = True   # its body, if any, is not read
            return
        with gateway.reading:   # held until the reply is sent: the decoded request lives that long
            try:
                request = self._read_json()
            except _BadBody as bad:
                self._refuse(bad)
                return
            try:
                status, body = gateway.exchange(request)
            except Exception as error:  # nothing an agent sends may take the harness down
                status, body = 500, _error(f"the gateway could not answer: {type(error).__name__}: {error}",
                                           "mlab_gateway_error")
            if status == 200 and isinstance(request, dict) and request.get("stream"):
                self._stream(body)
            else:
                self._send(status, body)
            del request, body
        if status == 200:
            try:
                self.wfile.flush()  # the reply is on its way before the trace is synced
            finally:
                gateway.replied()

    def _stream(self, body: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in stream_chunks(body):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True
