"""Benchmark of the model gateway of external agents: its overhead per model call.

The same chat call is made N times directly with litellm to a fake OpenAI-compatible server on
loopback (tests/agent/fake_openai.py), and N times through the gateway: an HTTP client on loopback,
the relay (external/relay.py, run here as in the sandbox, outside one) and the gateway on its Unix
socket, which forwards with the run's ModelClient to the same server. The overhead per call is the
difference of the medians; the ratio is gateway / direct. The gateway's trace record (a snapshot
and an fsynced record per call, measured by bench/step.py) is left out: recording here is a no-op.
Target: overhead < 5 ms per call.

    python bench/gateway.py [--calls 200] [--quick]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "agent"))
TARGET_MS = 5.0
PORT = 41411
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say ok."}]


def _direct(litellm, base: str, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        litellm.completion(model="openai/bench", messages=MESSAGES, api_base=base, api_key="none", num_retries=0)
        times.append(time.perf_counter() - start)
    return times


def _client(base: str, calls: int) -> list[float]:
    """The run's ModelClient called in-process (what the gateway adds to litellm, without the transport)."""
    from mlab.models.client import ModelClient, TierConfig

    client = ModelClient({t: TierConfig("openai/bench") for t in ("main", "fast", "edit")}, api_base=base)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        client.chat("main", MESSAGES, purpose="external")
        times.append(time.perf_counter() - start)
    return times


def _through_gateway(base: str, calls: int) -> list[float]:
    from mlab.external.gateway import Gateway
    from mlab.models.client import ModelClient, TierConfig, Usage

    client = ModelClient({t: TierConfig("openai/bench") for t in ("main", "fast", "edit")}, api_base=base)
    folder = Path(tempfile.mkdtemp(prefix="mlab-gw-bench-"))
    gateway = Gateway(str(folder / "gateway.sock"), client, {}, lambda *a: None, Usage(), 0, lambda end: None)
    gateway.start()
    relay = subprocess.Popen([sys.executable, "-I", str(REPO / "runtime" / "external" / "relay.py"),
                              str(folder / "gateway.sock"), str(PORT), "exec sleep 3600"],
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        connection = None
        for _ in range(100):  # the relay listens within a moment
            try:
                connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
                connection.connect()
                break
            except OSError:
                time.sleep(0.05)
        body = json.dumps({"model": "main", "messages": MESSAGES})
        headers = {"Authorization": f"Bearer {gateway.key}", "Content-Type": "application/json"}
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            connection.request("POST", "/v1/chat/completions", body, headers)
            response = connection.getresponse()
            assert response.status == 200, response.read()
            response.read()
            times.append(time.perf_counter() - start)
        return times
    finally:
        os.killpg(relay.pid, 9)  # the relay and its command
        relay.wait()
        gateway.stop()


def main(argv=None) -> int:
    if os.environ.get("MLAB_BENCH_TRACE"):
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["MLAB_BENCH_TRACE"]), exit=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 calls (a check that it runs, for CI)")
    args = parser.parse_args(argv)
    calls = 20 if args.quick else args.calls
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-server")  # the fake server takes any key
    from fake_openai import FakeOpenAI

    from mlab.models.client import import_litellm

    litellm = import_litellm()
    with FakeOpenAI(["ok"] * (3 * calls + 10)) as server:
        base = server.base
        _direct(litellm, base, 3)  # warm both paths up
        direct = _direct(litellm, base, calls)
        client = _client(base, calls)
        gateway = _through_gateway(base, calls)
    d, c, g = (statistics.median(times) * 1000 for times in (direct, client, gateway))
    print(f"calls: {calls}")
    print(f"direct litellm call, median: {d:.2f} ms")
    print(f"the run's ModelClient in-process, median: {c:.2f} ms")
    print(f"through relay + gateway, median: {g:.2f} ms")
    print(f"overhead per call: {g - d:.2f} ms (target < {TARGET_MS:g} ms); ratio gateway / direct: {g / d:.2f}")
    return 0 if g - d < TARGET_MS or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
