"""What an outside agent sends the gateway is bounded before it is decoded: a body past the size
cap is refused unread, a body nested past the depth bound gets an error reply (never a traceback
or a dropped connection), at most a few bodies are read at once (the rest wait, unread), API keys
of any bytes are compared without an error, and Validate Submission runs one call at a time."""
from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from types import SimpleNamespace

import pytest

from mlab.errors import MlabError
from mlab.external.gateway import MAX_READING, MAX_REQUEST_BYTES, Gateway
from mlab.models.usage import Usage
from mlab.scoring.child import call

MESSAGES = [{"role": "user", "content": "hi"}]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 20):
        super().__init__("gateway", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


class Replies:
    """A model that answers "ok", after `gate` is set when one is given."""

    def __init__(self, gate: threading.Event | None = None):
        self.gate = gate

    def chat(self, tier, messages, **settings):
        if self.gate is not None:
            self.gate.wait(20)
        return SimpleNamespace(response="ok", message={"role": "assistant", "content": "ok"}, prompt_tokens=3,
                               completion_tokens=1, to_json=lambda: {"prompt_tokens": 3, "completion_tokens": 1,
                                                                     "cost": 0.0})


@pytest.fixture
def serve(tmp_path):
    started = []

    def start(client=None, validate=None) -> Gateway:
        gateway = Gateway(str(tmp_path / f"gw{len(started)}.sock"), client or Replies(), {}, lambda *a: None,
                          Usage(), 0, lambda end: None, validate=validate)
        gateway.start()
        started.append(gateway)
        return gateway

    yield start
    for gateway in started:
        gateway.stop()


def post(gateway: Gateway, body: bytes, headers: dict | None = None, path: str = "/v1/chat/completions"):
    connection = UnixConnection(gateway.socket_path)
    connection.request("POST", path, body, {"Authorization": f"Bearer {gateway.key}",
                                            "Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def chat(gateway: Gateway) -> int:
    return post(gateway, json.dumps({"messages": MESSAGES}).encode())[0]


def test_a_request_nested_past_the_bound_gets_an_error_reply_and_the_gateway_serves_on(serve):
    gateway = serve()
    deep = b'{"messages": [{"role": "user", "content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}"
    status, body = post(gateway, deep)
    assert status == 400
    assert "levels deep" in body["error"]["message"]
    assert chat(gateway) == 200


def test_a_body_that_is_not_utf8_json_gets_an_error_reply(serve):
    gateway = serve()
    status, body = post(gateway, b'{"messages": "\xff\xfe"}')
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    assert chat(gateway) == 200


def test_a_body_past_the_size_cap_is_refused_unread(serve):
    gateway = serve()
    connection = UnixConnection(gateway.socket_path)
    connection.putrequest("POST", "/v1/chat/completions")
    connection.putheader("Authorization", f"Bearer {gateway.key}")
    connection.putheader("Content-Length", str(MAX_REQUEST_BYTES + 1))
    connection.endheaders()   # no body sent: the gateway must answer without waiting for it
    response = connection.getresponse()
    assert response.status == 413
    assert "at most" in json.loads(response.read())["error"]["message"]
    assert chat(gateway) == 200


@pytest.mark.parametrize("header", ["Authorization", "x-api-key", "api-key"])
def test_an_api_key_header_of_any_bytes_is_refused_with_401(serve, header):
    gateway = serve()
    connection = UnixConnection(gateway.socket_path)
    connection.putrequest("GET", "/v1/models")
    connection.putheader(header, "Bearer clé-\u00e9\u00ff".encode("utf-8") + b"\x80\xfe")
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 401
    assert "API key" in json.loads(response.read())["error"]["message"]
    assert chat(gateway) == 200


def test_at_most_a_few_request_bodies_are_read_at_once_and_the_rest_wait(serve):
    gate = threading.Event()
    gateway = serve(Replies(gate))
    body = json.dumps({"messages": [{"role": "user", "content": "x" * (4 << 20)}]}).encode()
    senders = MAX_READING + 3
    sent, statuses = [], []

    def send():
        connection = UnixConnection(gateway.socket_path, timeout=60)
        connection.request("POST", "/v1/chat/completions", body,
                           {"Authorization": f"Bearer {gateway.key}", "Content-Type": "application/json"})
        sent.append(True)   # the whole body left: the gateway has read (nearly) all of it
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)

    threads = [threading.Thread(target=send) for _ in range(senders)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(sent) <= MAX_READING:
        time.sleep(0.05)
    assert len(sent) <= MAX_READING   # the others' bodies wait, unread, in their sockets
    gate.set()
    for thread in threads:
        thread.join(60)
    assert statuses == [200] * senders   # queued, not refused


def test_validate_submission_calls_run_one_at_a_time(serve):
    running, most = [0], [0]
    lock = threading.Lock()

    def validate() -> str:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return "submission.csv is valid"

    gateway = serve(validate=validate)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(post(gateway, b"{}", path="/mlab/validate")))
               for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == [(200, {"text": "submission.csv is valid"})] * 6
    assert most[0] == 1


def test_a_scoring_child_given_the_run_s_memory_limit_cannot_pass_it():
    with pytest.raises(MlabError, match="MemoryError|memory"):
        call("builtins:bytearray", 200 << 20, memory_bytes=128 << 20)
    assert len(call("builtins:bytearray", 1 << 20, memory_bytes=128 << 20)) == 1 << 20


def test_a_scoring_child_past_its_time_is_stopped_with_a_message():
    started = time.monotonic()
    with pytest.raises(MlabError, match="time"):
        call("time:sleep", 30, timeout_s=1)
    assert time.monotonic() - started < 10



def test_a_body_that_trickles_in_is_refused_and_frees_its_slot(serve, monkeypatch):
    """A sender that declares a body and never sends it all would hold its reading slot (and with
    MAX_READING of them, every model call of the run): after BODY_TIMEOUT_S it gets a 408 and the
    gateway answers the others."""
    import mlab.external.gateway as gateway_module

    monkeypatch.setattr(gateway_module, "BODY_TIMEOUT_S", 0.5)
    gateway = serve()
    stalled = []
    for _ in range(MAX_READING):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(20)
        sock.connect(gateway.socket_path)
        sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {gateway.key}"
                     "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"mess".encode())
        stalled.append(sock)
    assert chat(gateway) == 200   # served once a slot is freed, not held for ever
    for sock in stalled:
        reply = sock.recv(65536).decode()
        assert reply.startswith("HTTP/1.1 408") and "did not arrive within 0.5 s" in reply
        sock.close()


class LongReplies:
    """A model whose every reply is LONG characters: far more than a socket's buffers hold."""

    LONG = 16 << 20

    def chat(self, tier, messages, **settings):
        text = "x" * self.LONG if messages[-1]["content"] == "long" else "ok"
        return SimpleNamespace(response=text, message={"role": "assistant", "content": text}, prompt_tokens=3,
                               completion_tokens=1, cost=0.0, tool_calls=None,
                               to_json=lambda: {"prompt_tokens": 3, "completion_tokens": 1, "cost": 0.0})


@pytest.mark.parametrize("stream", [True, False])
def test_a_client_that_stops_reading_its_reply_is_cut_off_and_the_gateway_serves_on(tmp_path, monkeypatch, stream):
    """A client that asks for a long reply and never reads it: the gateway's write would block for
    ever, holding its thread, its reading slot and (a stream) the gateway's lock. Within
    SEND_TIMEOUT_S the connection is shut, the exchange is recorded as made, and the next request is
    answered; the handler's thread ends."""
    import mlab.external.gateway as gateway_module

    monkeypatch.setattr(gateway_module, "SEND_TIMEOUT_S", 0.5)
    recorded = []
    gateway = Gateway(str(tmp_path / "gw.sock"), LongReplies(), {}, lambda exchange, call, started:
                      recorded.append(exchange), Usage(), 0, lambda end: None)
    gateway.start()
    try:
        before = {thread.ident for thread in threading.enumerate()}
        stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(gateway.socket_path)
        body = json.dumps({"model": "main", "stream": stream, "messages": [{"role": "user", "content": "long"}]})
        stuck.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {gateway.key}"
                      f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not recorded:
            time.sleep(0.02)
        assert len(recorded) == 1 and recorded[0]["stream"] is stream, "the exchange was not recorded"
        started = time.monotonic()
        assert chat(gateway) == 200   # the gateway's lock and reading slots are free again
        assert time.monotonic() - started < 10
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and {t.ident for t in threading.enumerate()} - before:
            time.sleep(0.02)
        assert not {t.ident for t in threading.enumerate()} - before, "the stuck exchange's thread is still there"
        stuck.settimeout(20)
        received = 0
        while chunk := stuck.recv(1 << 20):   # what the gateway sent before it cut the client off, then the end
            received += len(chunk)
        assert 0 < received < LongReplies.LONG
        stuck.close()
    finally:
        gateway.stop()
