"""The HTTP transport of every provider call: a wall-clock time-out for the whole call and a bound on
what is read, whatever the server does.

httpx's time-outs bound each read, so a server that trickles a byte at a time keeps a call alive
for ever; and a client reads a body of any size into memory. ModelClient runs each attempt inside
`bounded(seconds)`: every connect, write and read of that attempt (on this thread) waits at most
until the attempt's deadline, and the transport reads at most MAX_RESPONSE_BYTES of a response
(after decompression). It then screens the body before litellm decodes it: a body nested past
MAX_JSON_DEPTH (deep reasoning blocks) is refused, and tool-call arguments past the bounds of
mlab.models.decode are replaced by a short refusal (`refusal_text`) that the tool loop turns into
a format error for the model (mlab.models.decode.refusal). What is refused whole is
`ResponseRefused`, a provider error (the run ends as `model API failure`). A streamed reply
(`text/event-stream`) is passed on as it arrives, each read under the same deadline, its bytes
counted against the same bound; its tool calls are bounded once assembled (ModelClient.chat_stream).

litellm takes the transport through `client_session` (the OpenAI SDK, used by `openai/` and
OpenAI-compatible servers) and `sync_transport` (its own HTTP handlers, made after start-up).
"""
from __future__ import annotations

import json
import threading
import time
import urllib.request
import zlib
from contextlib import contextmanager

import httpcore
import httpx

from mlab.bounded_json import TooDeep, nesting
from mlab.models.decode import MAX_ARGUMENT_CHARS, MAX_RESPONSE_BYTES, refusal_text
from mlab.standard_json import MAX_JSON_DEPTH
from mlab.models.errors import ModelError

_local = threading.local()


class ResponseRefused(ModelError):
    """A provider response past the bounds (too big, nested too deep, compressed unreadably)."""


class _Bounds:
    def __init__(self, seconds: float, max_bytes: int):
        self.seconds, self.max_bytes = seconds, max_bytes
        self.deadline: float | None = None  # set by the first connect, write or read


@contextmanager
def bounded(seconds: float, max_bytes: int = MAX_RESPONSE_BYTES):
    """Every HTTP exchange of this thread inside the block ends by `seconds` after its first socket
    operation (litellm's own start-up, which can take seconds in a cold process, is not counted),
    and reads at most `max_bytes` of a response."""
    previous = getattr(_local, "bounds", None)
    _local.bounds = _Bounds(seconds, max_bytes)
    try:
        yield
    finally:
        _local.bounds = previous


def _left(timeout: float | None, kind: type[Exception]) -> float | None:
    """The per-operation time-out cut to what is left of the call's time (`kind` once none is)."""
    bounds = getattr(_local, "bounds", None)
    if bounds is None:
        return timeout
    if bounds.deadline is None:
        bounds.deadline = time.monotonic() + bounds.seconds
    left = bounds.deadline - time.monotonic()
    if left <= 0:
        raise kind("the call's time-out passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend):
        self.inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(self.inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                              socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        return _Stream(self.inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


_DROPPED = {b"content-encoding", b"content-length", b"transfer-encoding"}


class BoundedTransport(httpx.BaseTransport):
    """httpx's transport with the call's deadline on every socket operation, the body read whole
    within MAX_RESPONSE_BYTES, and screened (see the module's text). The proxy settings of the
    environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY) are followed as httpx's own client
    follows them, since a client given a transport no longer reads them itself."""

    def __init__(self, verify=True):
        self.verify = verify
        self.direct = self._made(None)
        self.proxied: dict[str, httpx.HTTPTransport] = {}
        self._lock = threading.Lock()

    def _made(self, proxy: str | None) -> httpx.HTTPTransport:
        transport = httpx.HTTPTransport(verify=self.verify, proxy=proxy)
        pool = transport._pool  # httpx exposes no network backend option: wrap the pool's
        pool._network_backend = _Backend(pool._network_backend)
        return transport

    def _route(self, url: httpx.URL) -> httpx.HTTPTransport:
        proxies = urllib.request.getproxies()
        proxy = proxies.get(url.scheme) or proxies.get("all")
        if not proxy or urllib.request.proxy_bypass(url.host):
            return self.direct
        with self._lock:
            if proxy not in self.proxied:
                self.proxied[proxy] = self._made(proxy)
            return self.proxied[proxy]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = self._route(request.url).handle_request(request)
        bounds = getattr(_local, "bounds", None)
        limit = bounds.max_bytes if bounds is not None else MAX_RESPONSE_BYTES
        if response.status_code == 200 and \
                response.headers.get("content-type", "").split(";")[0].strip().lower() == "text/event-stream":
            # a streamed reply goes on as it arrives (each read under the call's deadline), its bytes counted
            headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _DROPPED - {b"content-encoding"}]
            extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
            return httpx.Response(200, headers=headers, stream=_CountedStream(response, limit),
                                  extensions=extensions)
        try:
            body = _read(response.stream, limit)
        finally:
            response.close()
        body = screen_body(_decoded(body, response.headers.get("content-encoding", ""), limit))
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _DROPPED]
        headers.append((b"content-length", str(len(body)).encode()))
        extensions = {k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")}
        return httpx.Response(response.status_code, headers=headers, content=body, extensions=extensions)

    def close(self) -> None:
        for transport in [self.direct, *self.proxied.values()]:
            transport.close()


class _CountedStream(httpx.SyncByteStream):
    """A streamed response's body as it arrives, refused once it passes `limit` bytes."""

    def __init__(self, response: httpx.Response, limit: int):
        self.response, self.limit = response, limit

    def __iter__(self):
        size = 0
        for chunk in self.response.stream:
            size += len(chunk)
            if size > self.limit:
                raise ResponseRefused(f"the streamed response is more than {self.limit:,} bytes long; the rest "
                                      "was not read")
            yield chunk

    def close(self) -> None:
        self.response.close()


def _read(stream, limit: int) -> bytes:
    parts, size = [], 0
    for chunk in stream:
        size += len(chunk)
        if size > limit:
            raise ResponseRefused(f"the response is more than {limit:,} bytes long; the rest was not read")
        parts.append(chunk)
    return b"".join(parts)


def _decoded(body: bytes, encoding: str, limit: int) -> bytes:
    """The body decompressed (gzip or deflate, sent although identity was asked for), within `limit`."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate", "x-gzip"):
        raise ResponseRefused(f"the response is compressed with {encoding!r}, which mlab does not read")
    inflater = zlib.decompressobj(47 if encoding != "deflate" else zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as problem:
        raise ResponseRefused(f"the response's {encoding} body is damaged ({problem})") from None
    if len(out) > limit:
        raise ResponseRefused(f"the response is more than {limit:,} bytes long once decompressed; refused")
    return out


def screen_body(body: bytes) -> bytes:
    """A JSON body as it may be decoded: ResponseRefused when it nests past MAX_JSON_DEPTH; tool-call
    arguments past the bounds replaced by their refusal."""
    text = body.decode("utf-8", "replace")
    if not text.lstrip().startswith(("{", "[")):
        return body
    depth = nesting(text)
    if depth > MAX_JSON_DEPTH:
        raise ResponseRefused(str(TooDeep(depth, "the response")))
    if '"arguments"' not in text:
        return body
    try:
        document = json.loads(text)
    except ValueError:
        return body  # not JSON after all: the client says so
    changed = False
    for function in _functions(document):
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            continue
        if len(arguments) > MAX_ARGUMENT_CHARS:
            problem = (f"they are {len(arguments):,} characters long, more than the {MAX_ARGUMENT_CHARS:,} a tool "
                       "call may hold; write large files in parts (Append File)")
        elif (deep := nesting(arguments)) > MAX_JSON_DEPTH:
            problem = f"they nest objects or lists {deep:,} levels deep; at most {MAX_JSON_DEPTH} levels are accepted"
        else:
            continue
        function["arguments"] = refusal_text(problem)
        changed = True
    return json.dumps(document).encode() if changed else body


def _functions(document) -> list[dict]:
    """The `function` objects of the tool calls (and legacy function_call) of every choice."""
    found = []
    choices = document.get("choices") if isinstance(document, dict) else None
    for choice in choices if isinstance(choices, list) else []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                found.append(call["function"])
        if isinstance(message.get("function_call"), dict):
            found.append(message["function_call"])
    return found


def install(litellm) -> None:
    """Route litellm's synchronous HTTP clients through one BoundedTransport."""
    if isinstance(getattr(litellm, "sync_transport", None), BoundedTransport):
        return
    try:
        from litellm.llms.custom_httpx.http_handler import get_ssl_configuration

        verify = get_ssl_configuration()
    except (ImportError, AttributeError, TypeError):  # an older litellm: httpx's default certificates
        verify = True
    transport = BoundedTransport(verify=verify)
    litellm.sync_transport = transport
    litellm.client_session = httpx.Client(transport=transport, follow_redirects=True)
