"""The model gateway of an external run: the run's model, served on a Unix socket in the dialects
(wire protocols) of the field's agents.

The agent inside the sandbox reaches it through the relay (external/relay.py) at
http://127.0.0.1:PORT; each dialect has its own paths (`route`) and its own module under
external/dialects/, which turns a request into one conversation in OpenAI chat form (an Ask) and
the reply back into its body, its stream of events and its errors. Whatever the dialect, the
gateway forwards the call to the run's tier model through the run's ModelClient (so every litellm
provider, --api-base and the offline `mlab/` models work), forces the model under test (any other
model name is the main tier; the name asked for is recorded), meters tokens, cache reads and writes
and cost from the upstream's usage, and enforces the step, token and cost limits: a call past a
limit gets the dialect's error, and the run ends with the limit's failure mode. Each exchange is
one trace step (the request in OpenAI form, the reply, tokens, cost, the dialect) with a workspace
snapshot.

A streamed request is answered as the upstream's pieces arrive (ModelClient.chat_stream, on a
thread of its own, hands them over a queue); an upstream that does not stream has its whole reply
made into the same events. No piece for `stall_s` (STALL_S) ends the stream with the dialect's
error event, a record of what came, and the run.

The agent authenticates with the run's dummy key; provider keys stay in the harness.

What the agent sends is bounded before it is decoded, on every route of every dialect
(`_Handler._read_json`): a body must declare its length, at most MAX_REQUEST_BYTES (past it: 413,
the body left unread); it is decoded by the one bounded decoder (mlab.models.decode: nesting past
MAX_JSON_DEPTH is a 400); and at most MAX_READING requests are read and held at once, from their
first byte of body to their reply, the others waiting with their bodies unread in their sockets
(exchanges run one at a time anyway); a declared body that has not arrived within BODY_TIMEOUT_S
is refused (408), freeing its slot. API keys are compared as bytes, whatever the header holds.
What the gateway sends is bounded in time the same way (`_Handler._write`): each write of a reply
(a whole reply, its headers, one event of a stream) must be taken by the client within
SEND_TIMEOUT_S, or the connection is shut and the exchange ends there, as for a client that hung
up: its model call is recorded and charged, the rest of a stream is dropped. A client that opens a
streamed reply and stops reading would otherwise hold its thread, its reading slot and, for a
stream, the gateway's lock for ever.
Validate Submission runs one call at a time per run (`Gateway.validating`), the others waiting
their turn.

On the call's path, besides the model call: one JSON decode of the request, the limits, the
trace record (the workspace snapshot and one write() of the record) and one JSON encode of the
reply, sent in one write (headers and body together). The record's fsync comes after the reply
is sent (`after_reply`): a killed harness keeps the written record, and a machine crash loses at
most the exchange the agent was answered just then, which a resume redoes.
"""
from __future__ import annotations

import json
import os
import queue
import secrets
import socket
import socketserver
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from mlab.external.dialects import STATUS, Ask, BadRequest
from mlab.external.dialects.routes import count_tokens, dialect_of, models_body, route
from mlab.failure import FailureMode
from mlab.models import decode
from mlab.models.client import TIERS
from mlab.models.errors import ModelError
from mlab.models.usage import Usage

MAX_REQUEST_BYTES = 16 << 20  # a request body larger than this is refused, not read
MAX_READING = 2  # request bodies read and held at once: one being answered, one waiting for it
BODY_TIMEOUT_S = 60.0  # a declared body must arrive within this, or the request is refused and its slot freed
SEND_TIMEOUT_S = 60.0  # each write of a reply must be taken by the client within this, or the exchange ends
STALL_S = 300.0  # a streamed reply with no event for this long ends with the dialect's error event
_DONE, _FAILED = "done", "failed"  # the last item of a stream's events (after its deltas)


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
                 after_reply: Callable[[], None] | None = None, stall_s: float = STALL_S):
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
        self.stall_s = stall_s        # a stream with no event for this long ends (the dialect's error event)
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

    def _refused(self, dialect) -> tuple[int, dict] | None:
        """The error of a call the run no longer takes (it ended, or a limit is used up); under the lock."""
        if self.ended is not None:
            kind = "ended" if self.ended.end_reason.endswith("_limit") else "model_failure"
            return STATUS[kind], dialect.error_body(f"the run has ended: {self.ended.detail}", kind)
        limit = self.limit_reached()
        if limit:
            detail = f"the run's {limit} limit ({self.limits[limit]:g}) is used up"
            self._end(GatewayEnd(f"{limit}_limit", FailureMode.LIMIT_REACHED, detail))
            return STATUS["limit"], dialect.error_body(detail, "limit")
        return None

    def _charge(self, dialect, ask: Ask, call, started: float, stalled: bool = False) -> None:
        """Meter and record one exchange: its call counts against the limits at once."""
        self.calls += 1
        self.usage.add(call.to_json())
        exchange = {"messages": ask.messages, "tools": ask.tools, "model": ask.model, "dialect": dialect.NAME,
                    "stream": ask.stream}
        if stalled:
            exchange["stalled"] = True
        if ask.compaction:
            exchange["compaction"] = True
        if ask.notes:
            exchange["notes"] = list(ask.notes)
        self.record(exchange, call, started)
        self.recorded = True

    def exchange(self, dialect, ask: Ask) -> tuple[int, dict]:
        """(HTTP status, body) for one request answered whole."""
        with self.lock:
            refused = self._refused(dialect)
            if refused:
                return refused
            tier = tier_of(ask.model)
            started = time.time()
            try:
                call = self.client.chat(tier, ask.messages, tools=ask.tools, tool_choice=ask.tool_choice,
                                        parallel_tool_calls=ask.parallel_tool_calls, purpose="external")
            except ModelError as failure:
                self._end(GatewayEnd("failed", failure.failure_mode, str(failure)))
                return STATUS["model_failure"], dialect.error_body(str(failure), "model_failure")
            self._charge(dialect, ask, call, started)
            return 200, dialect.reply(call, ask)

    def stream(self, dialect, ask: Ask, sink) -> int:
        """One request answered as the dialect's stream of events, written to `sink` as the upstream's
        deltas arrive (`sink.begin()` sends the headers, `sink.write(bytes)` an event; an error before
        the first event is `sink.fail(status, body)`). A stream with no event for `stall_s` ends with
        the dialect's error event, a record of what came, and the run (model API failure). The HTTP
        status is returned."""
        with self.lock:
            refused = self._refused(dialect)
            if refused:
                sink.fail(*refused)
                return refused[0]
            tier = tier_of(ask.model)
            started = time.time()
            events: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=self._upstream, args=(tier, ask, events), name="mlab-gateway-upstream",
                             daemon=True).start()
            encoder = dialect.Stream(ask)
            text: list[str] = []
            item = self._next(events)
            if item is not None and item[0] == _FAILED:
                failure = item[1]
                self._end(GatewayEnd("failed", failure.failure_mode, str(failure)))
                sink.fail(STATUS["model_failure"], dialect.error_body(str(failure), "model_failure"))
                return STATUS["model_failure"]
            sink.begin(getattr(encoder, "content_type", "text/event-stream"))
            sink.write(encoder.start())
            while True:
                if item is None:
                    detail = f"the model's reply stalled: nothing came for {self.stall_s:g} s"
                    self._charge(dialect, ask, self._partial(tier, "".join(text)), started, stalled=True)
                    self._end(GatewayEnd("failed", FailureMode.MODEL_API_FAILURE, detail))
                    sink.write(encoder.error(detail, "stalled"))
                    return 200
                if item[0] == _DONE:
                    self._charge(dialect, ask, item[1], started)
                    sink.write(encoder.finish(item[1]))
                    return 200
                if item[0] == _FAILED:
                    failure = item[1]
                    self._end(GatewayEnd("failed", failure.failure_mode, str(failure)))
                    sink.write(encoder.error(str(failure), "model_failure"))
                    return 200
                if item[0] == "text":
                    text.append(item[1])
                sink.write(encoder.delta(item))
                item = self._next(events)

    def _next(self, events: queue.SimpleQueue):
        try:
            return events.get(timeout=self.stall_s)
        except queue.Empty:
            return None

    def _upstream(self, tier: str, ask: Ask, events: queue.SimpleQueue) -> None:
        """The model call of a stream, on a thread of its own: its deltas, then the call, into `events`."""
        settings = dict(tools=ask.tools, tool_choice=ask.tool_choice, parallel_tool_calls=ask.parallel_tool_calls,
                        purpose="external")
        try:
            streaming = getattr(self.client, "chat_stream", None)
            if streaming is not None:
                call = streaming(tier, ask.messages, on_delta=events.put, **settings)
            else:
                call = self.client.chat(tier, ask.messages, **settings)
            events.put((_DONE, call))
        except ModelError as failure:
            events.put((_FAILED, failure))
        except Exception as error:  # noqa: BLE001 - a fault of the upstream's library is the model's failure
            events.put((_FAILED, ModelError(f"the model call failed: {type(error).__name__}: {error}")))

    def _partial(self, tier: str, text: str):
        """What a stalled stream had sent, as a call of unknown usage."""
        from mlab.models.client import ModelCall

        model = getattr(getattr(self.client, "tiers", {}).get(tier), "model", tier)
        return ModelCall(tier=tier, model=model, purpose="external", response=text, usage_reported=False, cost=0.0,
                         message={"role": "assistant", "content": text or None})

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


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    gateway: Gateway


class _BadBody(Exception):
    """A request body refused before or while it was decoded: (status, message)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class _Sink:
    """A streamed reply's way out: the headers once, then each event sent as it is written. A
    client that has gone, or stopped reading (_Handler._write), loses the rest; the exchange is
    still recorded."""

    def __init__(self, handler: "_Handler"):
        self.handler, self.begun = handler, False

    def begin(self, content_type: str = "text/event-stream") -> None:
        handler = self.handler
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.close_connection = True
        self.begun = True
        handler.end_headers()

    def write(self, data: bytes) -> None:
        if data:
            self.handler._write(data)

    def fail(self, status: int, body: dict) -> None:
        self.handler._send(status, body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    # unbuffered (each write is one sendall, which the socket's time-out bounds as a whole), with a
    # reply's status line, headers and body joined into one write (_send): one segment through the
    # relay instead of two
    wbufsize = 0
    cut_off = False   # a write was not taken within SEND_TIMEOUT_S, or the client has gone

    def _write(self, data: bytes) -> bool:
        """Send `data` whole within SEND_TIMEOUT_S; False, with the connection shut, when the client
        did not take it (it stopped reading, or has gone): nothing more is sent on it."""
        if self.cut_off:
            return False
        self.connection.settimeout(SEND_TIMEOUT_S)
        try:
            self.wfile.write(data)
            return True
        except OSError:   # TimeoutError, BrokenPipeError, ConnectionResetError
            self.cut_off = self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False
        finally:
            if not self.cut_off:
                self.connection.settimeout(None)

    def flush_headers(self) -> None:
        """The base class's, through _write (its send_error too)."""
        if getattr(self, "_headers_buffer", None):
            data, self._headers_buffer = b"".join(self._headers_buffer), []
            self._write(data)

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # the trace records every exchange; nothing goes to the harness's stderr

    def address_string(self) -> str:
        return "sandbox"

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self._headers_buffer.append(b"\r\n" + data)   # the end of the headers and the body: one write
        self.flush_headers()

    def _key(self) -> str:
        headers = self.headers
        given = headers.get("Authorization", "").removeprefix("Bearer ").strip() or \
            headers.get("api-key", "").strip() or headers.get("x-api-key", "").strip() or \
            headers.get("x-goog-api-key", "").strip()
        if not given:
            given = (parse_qs(urlsplit(self.path).query).get("key") or [""])[0].strip()
        return given

    def _authorised(self, dialect) -> bool:
        gateway = self.server.gateway
        # as bytes: headers arrive as Latin-1 text, and compare_digest refuses non-ASCII text
        if secrets.compare_digest(self._key().encode("utf-8", "surrogateescape"), gateway.key.encode()):
            return True
        self._send(401, dialect.error_body("unknown API key: use the key mlab gave this run (OPENAI_API_KEY, "
                                           "MLAB_API_KEY)", "auth"))
        return False

    def _not_served(self, dialect) -> None:
        self._send(404, dialect.error_body(f"no such endpoint {self.command} {urlsplit(self.path).path}; the "
                                           "gateway serves /v1/chat/completions, /v1/responses, /v1/responses/compact, "
                                           "/v1/messages, /v1/messages/count_tokens, /v1/models and /v1beta/models/"
                                           "MODEL:generateContent, :streamGenerateContent and :countTokens", "not_found"))

    def do_GET(self):  # noqa: N802 - http.server's name
        path = urlsplit(self.path).path
        found = route("GET", self.path, self.headers)
        dialect = found[0] if found else dialect_of(self.path, self.headers)
        if not self._authorised(dialect):
            return
        if found is None:
            self._not_served(dialect)
        else:
            self._send(200, models_body(dialect, found[2].get("model", "")))

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
        # a sender that declares a body and trickles it would hold a reading slot for ever, and
        # with the others the run's model calls: the body must arrive within BODY_TIMEOUT_S
        self.connection.settimeout(BODY_TIMEOUT_S)
        try:
            data = self.rfile.read(length)
        except TimeoutError:
            raise _BadBody(408, f"the request body did not arrive within {BODY_TIMEOUT_S:g} s") from None
        finally:
            self.connection.settimeout(None)
        if len(data) < length:
            raise _BadBody(400, "the request body ended before its Content-Length")
        try:
            return decode.loads(data.decode("utf-8") if data else "null", what="the request body",
                                max_chars=MAX_REQUEST_BYTES)
        except ValueError as problem:   # not UTF-8, not JSON, too large or too deep
            raise _BadBody(400, f"the request body is not JSON within the bounds: {problem}") from None

    def _refuse(self, dialect, bad: _BadBody) -> None:
        self._send(bad.status, dialect.error_body(str(bad), "too_large" if bad.status == 413 else "invalid"))
        self.close_connection = True   # what is left of the body is not read as a next request

    def _answer(self, gateway: Gateway, dialect, operation: str, said: dict, request) -> int:
        """Answer one decoded request in its dialect; the HTTP status sent (0: nothing recorded)."""
        status, sink, ask = 0, _Sink(self), None
        try:
            ask = dialect.parse(request, **said)
            if operation == "count":
                self._send(200, dialect.count_reply(count_tokens(gateway.client, tier_of(ask.model), ask)))
                return 0
            if ask.stream:
                return gateway.stream(dialect, ask, sink)
            status, body = gateway.exchange(dialect, ask)
            self._send(status, body)
            return status
        except BadRequest as problem:
            self._send(400, dialect.error_body(str(problem), "invalid"))
        except Exception as error:  # nothing an agent sends may take the harness down
            text = f"the gateway could not answer: {type(error).__name__}: {error}"
            if sink.begun:
                sink.write(dialect.Stream(ask).error(text, "internal"))
            else:
                self._send(500, dialect.error_body(text, "internal"))
        return 0

    def do_POST(self):  # noqa: N802 - http.server's name
        path = urlsplit(self.path).path
        found = route("POST", self.path, self.headers)
        dialect = found[0] if found else dialect_of(self.path, self.headers)
        if not self._authorised(dialect):
            return
        gateway = self.server.gateway
        if path.rstrip("/") == "/mlab/validate" and gateway.validate is not None:
            with gateway.reading:
                try:
                    self._read_json()
                except _BadBody as bad:
                    self._refuse(dialect, bad)
                    return
            with gateway.validating:   # one scoring child at a time: the others wait their turn
                try:
                    text = gateway.validate()
                except Exception as error:  # a broken check is the agent's observation, never a crash
                    text = f"the submission could not be validated: {type(error).__name__}: {error}"
            self._send(200, {"text": text})
            return
        if found is None:
            self._not_served(dialect)
            self.close_connection = True   # its body, if any, is not read
            return
        with gateway.reading:   # held until the reply is sent: the decoded request lives that long
            try:
                request = self._read_json()
            except _BadBody as bad:
                self._refuse(dialect, bad)
                return
            status = self._answer(gateway, dialect, found[1], found[2], request)
            del request
        if status == 200:
            gateway.replied()   # the reply is on its way (or cut off) before the trace is synced
