"""A model gateway served for the providers' own SDKs: the gateway on its Unix socket, the relay
(external/relay.py, as in the sandbox) in a thread on a loopback port, the run's ModelClient behind
it with a scripted model (which does not stream: the gateway makes the dialect's stream) or a fake
OpenAI server (which streams: the gateway passes its pieces on as they come)."""
from __future__ import annotations

import importlib
import importlib.util
import json
import socket
import threading
from contextlib import contextmanager
from pathlib import Path

from mlab.external.gateway import Gateway
from mlab.models.client import ModelClient, TierConfig
from mlab.models.usage import Usage
from needs import module

RELAY = Path(__file__).resolve().parents[2] / "runtime" / "mlab" / "external" / "relay.py"


def sdk_module(name: str):
    """A provider's SDK (the test extra installs them): a test without it is skipped, or fails in CI."""
    return module(name, f"the gateway's {name} test needs it: pip install -e '.[test]'")


def _relay_module():
    spec = importlib.util.spec_from_file_location("mlab_relay_for_tests", RELAY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Served:
    """What a test sees of a served gateway: its base URL and key, the exchanges it recorded, how
    the run ended."""

    def __init__(self, gateway: Gateway, base: str):
        self.gateway, self.base, self.key = gateway, base, gateway.key
        self.records: list[tuple[dict, dict]] = []
        self.ends: list = []

    @property
    def exchange(self) -> dict:
        """The last exchange recorded (the request in OpenAI form, dialect, model asked for, ...)."""
        return self.records[-1][0]

    @property
    def call(self) -> dict:
        return self.records[-1][1]


def scripted_client(folder: Path, replies: list) -> ModelClient:
    path = Path(folder) / "replies.json"
    path.write_text(json.dumps(replies))
    return ModelClient({t: TierConfig(f"mlab/scripted:{path}") for t in ("main", "fast", "edit")})


def server_client(base: str) -> ModelClient:
    return ModelClient({t: TierConfig("openai/upstream") for t in ("main", "fast", "edit")}, api_base=base,
                       max_attempts=1)


@contextmanager
def served(folder: Path, client, limits: dict | None = None, stall_s: float = 30.0):
    """A gateway for `client` on a loopback port: yields Served."""
    served_box: list[Served] = []

    def record(exchange, call, started):
        served_box[0].records.append((exchange, call.to_json()))

    gateway = Gateway(str(Path(folder) / "gw.sock"), client, dict(limits or {}), record, Usage(), 0,
                      lambda end: served_box[0].ends.append(end), stall_s=stall_s)
    gateway.start()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    threading.Thread(target=_relay_module()._serve, args=(listener, gateway.socket_path), daemon=True).start()
    served_box.append(Served(gateway, f"http://127.0.0.1:{listener.getsockname()[1]}"))
    try:
        yield served_box[0]
    finally:
        listener.close()
        gateway.stop()


@contextmanager
def served_upstream(folder: Path, replies: list, stall_s: float = 30.0, **fake):
    """A gateway in front of a fake OpenAI server that streams REPLIES (FakeOpenAI's options in
    FAKE: usage, cached, faults, hold_streams, ...): yields (upstream, Served)."""
    from fake_openai import FakeOpenAI

    with FakeOpenAI(replies, **fake) as upstream, served(folder, server_client(upstream.base), stall_s=stall_s) as gateway:
        yield upstream, gateway


@contextmanager
def stalling(folder: Path, warm_up):
    """A gateway whose upstream's next stream stops after its first piece and never ends: a first
    stream (WARM_UP, the dialect's own call) warms the client up, since its first streamed call
    imports what litellm streams with and takes seconds on a loaded machine; then the stall time is
    made one second. After the block, checks what every dialect records of a stalled stream."""
    with served_upstream(folder, ["warm", "Never finished, this reply."], stall_s=60, faults=[None, "stall"]) as (_, gateway):
        warm_up(gateway)
        gateway.gateway.stall_s = 1.0
        yield gateway
        assert gateway.exchange["stalled"] is True and gateway.call["response"] == "Neve"
        assert [(end.end_reason, end.failure_mode) for end in gateway.ends] == [("failed", "model API failure")]
