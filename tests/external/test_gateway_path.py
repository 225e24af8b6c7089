"""The gateway's call path: a recorded exchange's reply is sent before the trace is fsynced (the
fsync is off the agent's path), and the trace writer can defer its fsync to the caller."""
from __future__ import annotations

import http.client
import json
import select
import socket
import threading
from types import SimpleNamespace

from mlab.external.dialects import chat
from mlab.external.gateway import Gateway
from mlab.models.usage import Usage
from mlab.trace import TraceWriter


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("gateway", timeout=10)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.path)


class OneReply:
    def chat(self, tier, messages, **settings):
        return SimpleNamespace(response="ok", message={"role": "assistant", "content": "ok"}, prompt_tokens=3,
                               completion_tokens=1, to_json=lambda: {"prompt_tokens": 3, "completion_tokens": 1,
                                                                     "cost": 0.0})


def _post(key: str, content: str = "hi") -> bytes:
    """The bytes of one chat-completions request to the gateway."""
    body = json.dumps({"messages": [{"role": "user", "content": content}]}).encode()
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def test_the_reply_leaves_before_the_trace_is_synced(tmp_path):
    """The order, not the time: when the sync starts, the whole reply already waits in the client's
    socket, and the exchange was recorded before either."""
    events: list[str] = []
    synced = threading.Event()
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def after_reply():
        arrived = select.select([client], [], [], 0)[0]  # looked at without waiting
        waiting = client.recv(1 << 16, socket.MSG_PEEK) if arrived else b""
        events.append("sync: the reply was at the client" if b'"content": "ok"' in waiting
                      else "sync: the client had no reply yet")
        synced.set()

    gateway = Gateway(str(tmp_path / "gw.sock"), OneReply(), {}, lambda *a: events.append("recorded"), Usage(), 0,
                      lambda end: None, after_reply=after_reply)
    gateway.start()
    try:
        client.settimeout(10)
        client.connect(str(tmp_path / "gw.sock"))
        client.sendall(_post(gateway.key))
        # the client reads only once the sync has looked: the reply is then read, not taken from under it
        assert synced.wait(10), "the recorded exchange was never synced"
        response = http.client.HTTPResponse(client)
        response.begin()
        assert response.status == 200 and json.loads(response.read())["choices"][0]["message"]["content"] == "ok"
        assert events == ["recorded", "sync: the reply was at the client"]
        client.sendall(b"GET /v1/models HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer " + gateway.key.encode()
                       + b"\r\n\r\n")
        response = http.client.HTTPResponse(client)
        response.begin()
        assert response.status == 200 and response.read()  # the same connection serves on
        assert len(events) == 2  # a GET records nothing and syncs nothing
    finally:
        client.close()
        gateway.stop()


def test_the_gateway_counts_each_exchanges_tokens_and_refuses_calls_past_the_token_limit(tmp_path):
    ends = []
    usage = Usage()
    gateway = Gateway(str(tmp_path / "gw.sock"), OneReply(), {"tokens": 5}, lambda *a: None, usage, 0, ends.append)
    first, second = gateway.exchange(chat, chat.parse({"messages": [{"role": "user", "content": "hi"}]})), \
        gateway.exchange(chat, chat.parse({"messages": [{"role": "user", "content": "again"}]}))
    assert first[0] == second[0] == 200
    assert usage.total_tokens == 8 and usage.tokens["main"] == {"prompt": 6, "completion": 2, "cached": 0}
    status, body = gateway.exchange(chat, chat.parse({"messages": [{"role": "user", "content": "once more"}]}))
    assert status == 429 and body["error"]["message"] == "the run's tokens limit (5) is used up"
    assert [(end.end_reason, end.failure_mode) for end in ends] == [("tokens_limit", "limit reached")]


def test_a_deferred_record_is_written_at_once_and_synced_by_the_caller(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr("mlab.trace.os.fsync", lambda fd: synced.append(fd))
    writer = TraceWriter(tmp_path / "trace.jsonl", sync_interval=0.0)
    writer.append({"step": 1}, sync=False)
    assert json.loads((tmp_path / "trace.jsonl").read_text()) == {"step": 1} and synced == []
    writer.sync()
    assert len(synced) == 1
    writer.append({"step": 2})  # the default: synced when the interval is due
    assert len(synced) == 2
    writer.close()


def test_a_response_is_priced_once():
    from mlab.models.prices import response_cost as _cost

    priced = []
    litellm = SimpleNamespace(completion_cost=lambda **kw: priced.append(kw) or 0.5)
    logged = SimpleNamespace(_hidden_params={"response_cost": 0.25})
    assert _cost(litellm, logged, "openai/unpriced-model") == 0.25 and priced == [], "litellm's own pricing of the response is reused"
    assert _cost(litellm, SimpleNamespace(_hidden_params={"response_cost": None}), "openai/unpriced-model") is None  # not in the price map
    assert _cost(litellm, SimpleNamespace(_hidden_params={}), "openai/unpriced-model") == 0.5 and len(priced) == 1  # not priced yet
