"""A fake OpenAI-compatible chat server on 127.0.0.1 for tests, with injectable faults; a closed
port (connection refused) and a server that accepts connections and never answers."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD_S = 60.0  # how long a held stream waits for its client (hold_streams)


class FakeOpenAI:
    """Answers /chat/completions with queued replies; `faults` is a queue of 429, 500, 'hang' or
    'no choices' (a 200 response whose `choices` list is empty), 'trickle' (a
    valid response sent a byte every 50 ms; 'trickle headers' from its first byte), ('huge', N) (a body of
    N bytes, sent as fast as the client reads), ('body', text) (a 200 response with that body) or
    ('gzip', bytes) (those bytes with content-encoding gzip, whatever the request accepts), or 'stall'
    (a streamed reply that stops after its first piece).

    A request with `stream` gets its reply as chat.completion.chunk events, `gap_s` apart.

    A reply is a text (the message's content) or an assistant message sent as it is (a dict with
    content and tool_calls in OpenAI form; `tool_call(...)` makes one call). With
    `refuse_tools` every request that has a `tools` field is refused with a 400, worded as
    servers without tool support word it (a number N: every one after the first N requests); with `refuse_parallel`, every request with the
    `parallel_tool_calls` field; with `auto_only`, a `tool_choice` other than "auto"."""

    def __init__(self, replies: list, faults: list | None = None, usage=(11, 7), cached: int = 0,
                 refuse_tools: bool | int = False, refuse_parallel: bool = False, auto_only: bool = False,
                 gap_s: float = 0.0, cache_written: int = 0, hold_streams: bool = False):
        self.replies = list(replies)
        self.refuse_tools = refuse_tools
        self.refuse_parallel = refuse_parallel  # refuse the parallel_tool_calls field (tools are taken)
        self.auto_only = auto_only  # refuse a tool_choice other than "auto" (as llama.cpp's handler)
        self.faults = list(faults or [])
        self.usage = usage
        self.cached = cached  # prompt tokens the server says it served from its prompt cache
        self.gap_s = gap_s  # a streamed reply: the pause between its chunks
        self.hold_streams = hold_streams  # a streamed reply waits for `hold` before it finishes
        self.cache_written = cache_written  # prompt tokens the server says it wrote to its prompt cache
        self.requests: list[dict] = []
        # a streamed reply waits before its finish chunk until the test sets `hold` (when its client has
        # seen a piece): `released` says whether it was set in time, so a gateway that forwards the
        # pieces as they come is told from one that gathers the reply first by order, not by timing
        self.hold = threading.Event()
        self.released: bool | None = None
        self.sent = 0  # bytes of a 'huge' body written so far
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                fault = server.faults.pop(0) if server.faults else None
                if isinstance(fault, tuple) and fault[0] == "body":  # a 200 response with this body as it is
                    return self._send(200, fault[1])
                if isinstance(fault, tuple) and fault[0] == "gzip":  # these bytes, said to be gzip (asked or not)
                    return self._send(200, fault[1], encoding="gzip")
                if fault in ("trickle", "trickle headers"):  # a byte every 50 ms, for minutes
                    return self._trickle(fault == "trickle headers")
                if isinstance(fault, tuple) and fault[0] == "huge":  # a body of that many bytes, sent fast
                    return self._huge(fault[1])
                if fault == "hang":
                    time.sleep(3)
                    return self._send(500, {"error": {"message": "too late"}})
                if fault in (429, 500, 503):
                    return self._send(fault, {"error": {"message": f"injected {fault}", "type": "server_error"}})
                if fault == "no choices":
                    return self._send(200, {"id": "chatcmpl-0", "object": "chat.completion", "created": 0,
                                            "model": body.get("model"), "choices": [],
                                            "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}})
                if server.refuse_parallel and "parallel_tool_calls" in body:
                    return self._send(400, {"error": {"message": "parallel_tool_calls is not supported",
                                                      "type": "invalid_request_error", "param": "parallel_tool_calls"}})
                if server.auto_only and body.get("tool_choice") not in (None, "auto"):
                    return self._send(400, {"error": {"message": f"tool_choice {body['tool_choice']!r} is not "
                                                                 "supported; only 'auto'", "type": "invalid_request_error"}})
                refusing = server.refuse_tools is True or (type(server.refuse_tools) is int
                                                           and len(server.requests) > server.refuse_tools)
                if refusing and "tools" in body:
                    return self._send(400, {"error": {"message": "tools are not supported by this server: "
                                                                 "start it with a tool-call parser",
                                                      "type": "invalid_request_error", "param": "tools"}})
                reply = server.replies.pop(0) if server.replies else "no more replies"
                message = dict(reply, role="assistant") if isinstance(reply, dict) else \
                    {"role": "assistant", "content": reply}
                if body.get("stream"):
                    return self._stream(body, message, stall=fault == "stall")
                self._send(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                                 "message": message}],
                    "usage": server.usage_document()})

            def _stream(self, body: dict, message: dict, stall: bool):
                """The reply as chat.completion.chunk events, `gap_s` apart: the reasoning and the text
                in pieces of 4 characters (the reasoning's signatures after it), each tool call's id and name, then its arguments in pieces;
                the finish reason, the usage (when asked for) and [DONE]. With `stall`: after the
                first piece, nothing more for 30 s."""
                def chunk(delta, finish=None, **more):
                    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                            "model": body.get("model"), "choices": [{"index": 0, "delta": delta,
                                                                     "finish_reason": finish}], **more}
                chunks = [chunk({"role": "assistant", "content": ""})]
                for field in ("reasoning_content", "content"):
                    text = message.get(field) or ""
                    chunks += [chunk({field: text[i:i + 4]}) for i in range(0, len(text), 4)]
                    if field == "reasoning_content":  # the reasoning's signature ends it, as Anthropic's does
                        chunks += [chunk({"thinking_blocks": [{"type": "thinking", "thinking": "",
                                                               "signature": block["signature"]}]})
                                   for block in message.get("thinking_blocks") or [] if block.get("signature")]
                for index, call in enumerate(message.get("tool_calls") or []):
                    chunks.append(chunk({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                                         "function": {"name": call["function"]["name"],
                                                                      "arguments": ""}}]}))
                    arguments = call["function"]["arguments"]
                    chunks += [chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + 5]}}]})
                               for i in range(0, len(arguments), 5)]
                chunks.append(chunk({}, "tool_calls" if message.get("tool_calls") else "stop"))
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                                   "model": body.get("model"), "choices": [],
                                   "usage": server.usage_document()})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for number, data in enumerate(chunks):
                        if number == len(chunks) - 1 - ("usage" in chunks[-1]) and server.hold_streams:
                            server.released = server.hold.wait(HOLD_S)
                        self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                        self.wfile.flush()
                        if stall and number == 1:
                            time.sleep(30)
                            return
                        time.sleep(server.gap_s)
                    self.wfile.write(b"data: [DONE]\n\n")
                except OSError:  # the client gave up
                    pass
                self.close_connection = True

            def _trickle(self, in_headers: bool):
                body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 4000}}]})
                head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
                slow = (head + body) if in_headers else body
                try:
                    if not in_headers:
                        self.wfile.write(head.encode())
                    for char in slow:
                        self.wfile.write(char.encode())
                        self.wfile.flush()
                        time.sleep(0.05)
                except OSError:  # the client gave up
                    pass
                self.close_connection = True

            def _huge(self, size: int):
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(size))
                self.end_headers()
                chunk = b" " * (1 << 20)
                try:
                    while server.sent < size:
                        self.wfile.write(chunk)
                        server.sent += len(chunk)
                except OSError:  # the client stopped reading
                    pass
                self.close_connection = True

            def _send(self, status, payload, encoding=None):
                data = payload if isinstance(payload, bytes) else payload.encode() if isinstance(payload, str) \
                    else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                if encoding:
                    self.send_header("content-encoding", encoding)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True  # a 'hang' still sleeping must not hold up the test's end
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def usage_document(self) -> dict:
        usage = {"prompt_tokens": self.usage[0], "completion_tokens": self.usage[1], "total_tokens": sum(self.usage),
                 "prompt_tokens_details": {"cached_tokens": self.cached}}
        if self.cache_written:
            usage["cache_creation_input_tokens"] = self.cache_written
        return usage

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def tool_call(name: str, arguments, call_id: str | None = "call_1", content: str | None = None,
              more: list | None = None) -> dict:
    """An assistant message with one tool call (arguments: an object, sent as JSON text, or the
    text itself), and the calls of `more` ((name, arguments, id) triples) after it."""
    def one(name, arguments, call_id):
        call = {"type": "function", "function": {
            "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}
        if call_id is not None:
            call["id"] = call_id
        return call

    return {"content": content, "tool_calls": [one(name, arguments, call_id)] +
            [one(*extra) for extra in more or []]}


def closed_port_base() -> str:
    """The /v1 URL of a port on 127.0.0.1 where nothing listens, so a connection is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class SilentServer:
    """Accepts connections on 127.0.0.1 and never answers: a server that hangs."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)  # the kernel completes each handshake; nothing ever reads or replies
        self.base = f"http://127.0.0.1:{self.socket.getsockname()[1]}/v1"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:  # closed at the end of the test
                return
            self.held.append(connection)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.socket.close()
        for connection in self.held:
            connection.close()
