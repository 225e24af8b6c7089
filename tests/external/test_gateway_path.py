"""The gateway's call path: a recorded exchange's reply is sent before the trace is fsynced (the
fsync is off the agent's path), and the trace writer can defer its fsync to the caller."""
from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from types import SimpleNamespace

from mlab.external.gateway import Gateway
from mlab.models.client import Usage
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


def test_the_reply_leaves_before_the_trace_is_synced(tmp_path):
    events: list[str] = []
    answered = threading.Event()

    def after_reply():
        events.append("sync starts")
        # the client has its reply while the sync is still to come: it was not waiting for it
        events.append("client had the reply" if answered.wait(5) else "client was still waiting")

    gateway = Gateway(str(tmp_path / "gw.sock"), OneReply(), {}, lambda *a: events.append("recorded"), Usage(), 0,
                      lambda end: None, after_reply=after_reply)
    gateway.start()
    try:
        connection = UnixConnection(str(tmp_path / "gw.sock"))
        started = time.monotonic()
        connection.request("POST", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "hi"}]}),
                           {"Authorization": f"Bearer {gateway.key}", "Content-Type": "application/json"})
        response = connection.getresponse()
        body = json.loads(response.read())
        answered.set()
        assert time.monotonic() - started < 4, "the reply waited for the trace's sync"
        assert body["choices"][0]["message"]["content"] == "ok"
        for _ in range(100):
            if len(events) == 3:
                break
            time.sleep(0.02)
        assert events == ["recorded", "sync starts", "client had the reply"]
        connection.request("GET", "/v1/models", headers={"Authorization": f"Bearer {gateway.key}"})
        assert connection.getresponse().status == 200  # the same connection serves on: nothing recorded, no sync
        assert len(events) == 3
    finally:
        gateway.stop()


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
