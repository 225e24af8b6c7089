"""Benchmark of the model gateway of external agents: its overhead per model call, robust to load.

The same chat call goes to a fake OpenAI-compatible server on loopback (tests/agent/fake_openai.py)
two ways: directly with litellm, and through the gateway (an HTTP client on loopback, the relay
external/relay.py run as in the sandbox but outside one, the gateway on its Unix socket, which
forwards with the run's ModelClient to the same server). On a loaded machine the wall time of
either way jumps by milliseconds at random, so:

- the two ways are interleaved, call by call (which goes first alternates), in several rounds,
  so a spell of load hits both alike; the overhead is the median over rounds of each round's
  median of paired differences (gateway − direct), with the 25–75% range of all the paired
  differences beside it;
- the CPU time of the gateway's own code path is counted per call, which load inflates far less
  than wall time: the gateway thread's CPU per request outside the model call (HTTP parsing,
  limits, the trace record, the reply's JSON), the relay process's CPU per call (from
  /proc/PID/stat), and what the run's ModelClient adds to a bare litellm call (thread CPU);
- each exchange writes its trace record for real (one write() to a trace.jsonl, as a run does)
  and fsyncs it after the reply is sent, as the external runner does; the fsync's time is shown,
  and it is not on the call's path. The workspace snapshot of each call is bench/step.py's.

Target: overhead < 5 ms per call (wall, median), and the gateway's own CPU well below it.

Then each dialect (chat, responses, anthropic, gemini), answered whole and streamed (the fake
server streams when asked, so a stream is passed on piece by piece): the gateway's own CPU per
call, i.e. the handler thread's CPU outside the model call (the request's parsing into the client's
form, the limits, the record, the reply or each event in the dialect's shape) with the relay's CPU
per call. Target under 5 ms for each.
`--old-path` measures the path as it was before it was trimmed: the trace fsynced before the
reply, the reply's headers and body in two writes, and each response priced a second time.

    python bench/gateway.py [--rounds 5] [--calls 40] [--quick] [--old-path] [--dialect-calls 30]
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


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(25th percentile, median, 75th percentile)."""
    if len(values) < 2:
        return (values[0],) * 3 if values else (float("nan"),) * 3
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


class TimedClient:
    """The run's ModelClient, with the handler thread's CPU time inside each chat call counted (a
    streamed call runs on a thread of its own: the handler's CPU is all the gateway's)."""

    def __init__(self, client):
        self.client, self.cpu = client, []
        self.tiers = client.tiers

    def chat(self, *args, **kwargs):
        start = time.thread_time()
        try:
            return self.client.chat(*args, **kwargs)
        finally:
            self.cpu.append(time.thread_time() - start)

    def chat_stream(self, *args, **kwargs):
        return self.client.chat_stream(*args, **kwargs)


# One small request per dialect: its path (answered whole, streamed) and its body.
SYSTEM, ASK = MESSAGES[0]["content"], MESSAGES[1]["content"]
DIALECTS = {
    "chat": (("/v1/chat/completions", "/v1/chat/completions"),
             lambda stream: {"model": "main", "messages": MESSAGES, "stream": stream}),
    "responses": (("/v1/responses", "/v1/responses"),
                  lambda stream: {"model": "gpt-5", "instructions": SYSTEM, "input": ASK, "stream": stream}),
    "anthropic": (("/v1/messages", "/v1/messages"),
                  lambda stream: {"model": "claude", "max_tokens": 64, "system": SYSTEM, "stream": stream,
                                  "messages": [{"role": "user", "content": ASK}]}),
    "gemini": (("/v1beta/models/main:generateContent", "/v1beta/models/main:streamGenerateContent?alt=sse"),
               lambda stream: {"systemInstruction": {"parts": [{"text": SYSTEM}]},
                               "contents": [{"role": "user", "parts": [{"text": ASK}]}]}),
}


class Trace:
    """A run's trace for the gateway's record callback: one write() per exchange, fsynced after the
    reply (before it, on the call's path, with `on_path`)."""

    def __init__(self, folder: Path, on_path: bool = False):
        from mlab.trace import TraceWriter

        self.writer = TraceWriter(folder / "trace.jsonl", sync_interval=float("inf"))
        self.fsync_s: list[float] = []
        self.on_path = on_path

    def record(self, request: dict, call, started: float) -> None:
        self.writer.append({"step": len(self.fsync_s) + 1, "model": {"request": request, "response": call.response,
                                                                     "calls": [call.to_json()]}}, sync=False)
        if self.on_path:
            self.after_reply()

    def after_reply(self) -> None:
        start = time.perf_counter()
        self.writer.sync()
        self.fsync_s.append(time.perf_counter() - start)


def _old_path(gateway_module) -> None:
    """Undo what trimmed the path: unbuffered replies (two writes) and a second pricing of each response."""
    from mlab.models import prices

    gateway_module._Handler.wbufsize = 0

    def priced_again(litellm, response, model):
        try:
            return float(litellm.completion_cost(completion_response=response))
        except Exception:  # noqa: BLE001 - as the client did: not in the price map
            return None

    prices.response_cost = priced_again


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc), 0.0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Bench:
    def __init__(self, base: str, old_path: bool = False):
        import litellm

        from mlab.external import gateway as gateway_module
        from mlab.models.client import ModelClient, TierConfig
        from mlab.models.usage import Usage

        self.litellm, self.base = litellm, base
        self.folder = Path(tempfile.mkdtemp(prefix="mlab-gw-bench-"))
        self.client = TimedClient(ModelClient({t: TierConfig("openai/bench") for t in ("main", "fast", "edit")},
                                              api_base=base))
        self.trace = Trace(self.folder, on_path=old_path)
        self.gateway = gateway_module.Gateway(str(self.folder / "gateway.sock"), self.client, {}, self.trace.record,
                                              Usage(), 0, lambda end: None,
                                              after_reply=None if old_path else self.trace.after_reply)
        if old_path:
            _old_path(gateway_module)
        self.handler_cpu: list[float] = []
        self._count_handler_cpu(gateway_module._Handler)
        self.relay = None
        self.connection = None

    def _count_handler_cpu(self, handler) -> None:
        original, cpu = handler.handle_one_request, self.handler_cpu

        def handle_one_request(request_handler):
            start = time.thread_time()
            original(request_handler)
            if getattr(request_handler, "command", None) == "POST":
                cpu.append(time.thread_time() - start)
                request_handler.command = None  # the next, keep-alive request sets it again

        handler.handle_one_request = handle_one_request

    def start(self) -> None:
        self.gateway.start()
        self.relay = subprocess.Popen([sys.executable, "-I", str(REPO / "runtime" / "mlab" / "external" / "relay.py"),
                                       str(self.folder / "gateway.sock"), str(PORT), "exec sleep 3600"],
                                      start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):  # the relay listens within a moment
            try:
                self.connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
                self.connection.connect()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("the relay did not start listening")

    def stop(self) -> None:
        if self.relay is not None:
            os.killpg(self.relay.pid, 9)  # the relay and its command
            self.relay.wait()
        self.gateway.stop()
        self.trace.writer.close()

    def direct(self) -> float:
        start = time.perf_counter()
        self.litellm.completion(model="openai/bench", messages=MESSAGES, api_base=self.base, api_key="none",
                                num_retries=0)
        return time.perf_counter() - start

    def through_gateway(self) -> float:
        body = json.dumps({"model": "main", "messages": MESSAGES})
        headers = {"Authorization": f"Bearer {self.gateway.key}", "Content-Type": "application/json"}
        start = time.perf_counter()
        self.connection.request("POST", "/v1/chat/completions", body, headers)
        response = self.connection.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - start
        assert response.status == 200, data
        return elapsed

    def dialect_call(self, dialect: str, stream: bool) -> None:
        paths, body = DIALECTS[dialect]
        headers = {"Authorization": f"Bearer {self.gateway.key}", "Content-Type": "application/json"}
        self.connection.request("POST", paths[stream], json.dumps(body(stream)), headers)
        response = self.connection.getresponse()
        data = response.read()
        assert response.status == 200 and data, data

    def dialect_cpu(self, calls: int) -> dict:
        """Per dialect and (whole, streamed): the median of the gateway's own CPU per call (ms)."""
        found = {}
        for dialect in DIALECTS:
            for stream in (False, True):
                for _ in range(3):  # warm up (the dialect's first parse, the stream's first thread)
                    self.dialect_call(dialect, stream)
                self.handler_cpu.clear(), self.client.cpu.clear()
                relay_before = process_cpu_s(self.relay.pid)
                for _ in range(calls):
                    self.dialect_call(dialect, stream)
                relay = (process_cpu_s(self.relay.pid) - relay_before) / calls
                model = self.client.cpu if not stream else [0.0] * len(self.handler_cpu)
                own = [h - c for h, c in zip(self.handler_cpu, model)]
                found[(dialect, stream)] = statistics.median(own) + relay
        return found

    def client_overhead_cpu(self, calls: int) -> tuple[float, float]:
        """Median thread CPU of a bare litellm call and of the run's ModelClient call, interleaved."""
        bare, wrapped = [], []
        for _ in range(calls):
            start = time.thread_time()
            self.litellm.completion(model="openai/bench", messages=MESSAGES, api_base=self.base, api_key="none",
                                    num_retries=0)
            bare.append(time.thread_time() - start)
            start = time.thread_time()
            self.client.client.chat("main", MESSAGES, purpose="external")
            wrapped.append(time.thread_time() - start)
        return statistics.median(bare), statistics.median(wrapped)


def run(rounds: int, calls: int, old_path: bool = False, dialect_calls: int = 30) -> dict:
    from fake_openai import FakeOpenAI

    with FakeOpenAI(["ok"] * (rounds * calls * 2 + 4 * calls + 40 + 8 * (dialect_calls + 3))) as server:
        bench = Bench(server.base, old_path)
        bench.start()
        try:
            for _ in range(5):  # warm both ways up (imports, connections, litellm's caches)
                bench.direct(), bench.through_gateway()
            bench.handler_cpu.clear(), bench.client.cpu.clear(), bench.trace.fsync_s.clear()
            relay_before = process_cpu_s(bench.relay.pid)
            per_round, pairs, direct_all, gateway_all = [], [], [], []
            for r in range(rounds):
                differences = []
                for i in range(calls):
                    if (i + r) % 2:
                        g, d = bench.through_gateway(), bench.direct()
                    else:
                        d, g = bench.direct(), bench.through_gateway()
                    differences.append(g - d)
                    direct_all.append(d), gateway_all.append(g)
                per_round.append(statistics.median(differences))
                pairs += differences
            relay_cpu = (process_cpu_s(bench.relay.pid) - relay_before) / (rounds * calls)
            bare, wrapped = bench.client_overhead_cpu(calls)
            own = [h - c for h, c in zip(bench.handler_cpu, bench.client.cpu)]
            dialects = bench.dialect_cpu(dialect_calls) if not old_path else {}
        finally:
            bench.stop()
    return {"rounds": rounds, "calls": calls, "load": os.getloadavg(), "direct": quartiles(direct_all),
            "gateway": quartiles(gateway_all), "per_round": per_round, "overhead": statistics.median(per_round),
            "pairs": quartiles(pairs), "handler_cpu": quartiles(own), "relay_cpu": relay_cpu,
            "client_cpu": (bare, wrapped), "fsync": quartiles(bench.trace.fsync_s), "old_path": old_path,
            "dialects": dialects, "dialect_calls": dialect_calls}


def report(found: dict) -> str:
    ms = lambda value: f"{value * 1000:.2f}"  # noqa: E731 - a formatter
    span = lambda q: f"{ms(q[1])} ms [25-75%: {ms(q[0])}-{ms(q[2])}]"  # noqa: E731
    bare, wrapped = found["client_cpu"]
    own_cpu = found["handler_cpu"][1] + found["relay_cpu"] + max(wrapped - bare, 0.0)
    return "\n".join([
        f"load average (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in found['load'])}; "
        f"{found['rounds']} rounds x {found['calls']} interleaved pairs",
        f"direct litellm call, wall: {span(found['direct'])}",
        f"through relay + gateway, wall: {span(found['gateway'])}",
        f"overhead per call, wall: {ms(found['overhead'])} ms (median of the rounds' medians: "
        f"{', '.join(ms(v) for v in found['per_round'])}); paired differences {span(found['pairs'])}; "
        f"target < {TARGET_MS:g} ms",
        f"ratio gateway / direct (medians): {found['gateway'][1] / found['direct'][1]:.2f}",
        f"CPU of the gateway's own path per call: {ms(own_cpu)} ms = handler outside the model call "
        f"{span(found['handler_cpu'])} + relay {ms(found['relay_cpu'])} ms + ModelClient over bare litellm "
        f"{ms(wrapped - bare)} ms ({ms(wrapped)} vs {ms(bare)})",
        f"trace fsync {'before each reply (on' if found['old_path'] else 'after each reply (off'} the call's "
        f"path): {span(found['fsync'])}",
    ] + ([f"the gateway's own CPU per call by dialect (handler outside the model call + relay; median of "
          f"{found['dialect_calls']}; target < {TARGET_MS:g} ms):"] +
         [f"  {dialect:<10} whole {ms(found['dialects'][(dialect, False)])} ms, streamed "
          f"{ms(found['dialects'][(dialect, True)])} ms" for dialect in DIALECTS] if found["dialects"] else []))


def main(argv=None) -> int:
    if os.environ.get("MLAB_BENCH_TRACE"):
        import faulthandler

        faulthandler.dump_traceback_later(float(os.environ["MLAB_BENCH_TRACE"]), exit=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of interleaved calls (default 5)")
    parser.add_argument("--calls", type=int, default=40, help="pairs of calls per round (default 40)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 10 (a check that it runs, for CI)")
    parser.add_argument("--dialect-calls", type=int, default=30,
                        help="calls per dialect, whole and streamed (default 30)")
    parser.add_argument("--old-path", action="store_true",
                        help="the path before it was trimmed: fsync before the reply, two writes, priced twice")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1:
        parser.error("--rounds and --calls must be at least 1")
    rounds, calls = (2, 10) if args.quick else (args.rounds, args.calls)
    dialect_calls = 5 if args.quick else max(args.dialect_calls, 1)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake-server")  # the fake server takes any key
    from mlab.models.client import import_litellm

    import_litellm()
    found = run(rounds, calls, args.old_path, dialect_calls)
    print(report(found))
    within = found["overhead"] * 1000 < TARGET_MS and all(v * 1000 < TARGET_MS for v in found["dialects"].values())
    return 0 if within or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
