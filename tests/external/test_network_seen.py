"""The relay's account of the sandbox's network, at the end of the agent's log: an agent that only
talks to the gateway is told so, and every other kind of attempt (a closed loopback port, an outside
address, a name lookup, a UDP datagram) is counted, so the std agents' tests can assert that nothing
but the gateway was tried (test_std_external_agents.py)."""
from __future__ import annotations

import re
from pathlib import Path

from agent_helpers import FIT_PY, mlab, only_run, scripted
from mlab.sandbox.runner import sandbox_available
from needs import needs
from network_seen import assert_only_the_gateway, network_seen

needs_sandbox = needs(None if sandbox_available()[0] else f"bubblewrap cannot start a sandbox here: {sandbox_available()[1]}")

# Each kind of attempt an agent's start-up makes (an update check through a proxy, a download, a name
# lookup, a DNS query to a local resolver), then one call to the gateway.
TRIER = '''
agent trier external {
  command """
    {{ python }} - <<'AGENT'
    import json, socket, urllib.request
    def attempt(what):
        try:
            what()
        except OSError as error:
            print("refused:", type(error).__name__)
    attempt(lambda: socket.create_connection(("127.0.0.1", 9), 2))
    attempt(lambda: socket.create_connection(("192.0.2.1", 443), 2))
    attempt(lambda: socket.getaddrinfo("pypi.org", 443))
    attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"?", ("127.0.0.1", 53)))
    body = json.dumps({"model": "main", "messages": [{"role": "user", "content": "hello"}]}).encode()
    request = urllib.request.Request("{{ api_base }}/chat/completions", data=body, headers={
        "Authorization": "Bearer {{ api_key }}", "Content-Type": "application/json"})
    print("gateway:", urllib.request.urlopen(request, timeout=60).status)
    AGENT
    """
}
'''


def build_with(tmp_path: Path, tiny_task: Path, agents: str) -> Path:
    source = tmp_path / "mine.mlab"
    source.write_text(f'use "{tiny_task}"\n{agents}\n')
    from mlabc import cli

    assert cli.main(["compile", str(source), "-o", str(tmp_path / "build")]) == 0
    return tmp_path / "build"


@needs_sandbox
def test_an_agent_that_only_calls_the_gateway_is_told_so(tmp_path, tiny_task):
    code_reply = f"Here is the script.\n```python\n{FIT_PY}```\n"
    mlab("run", tiny_task, "--agent", "own-script", "--model", scripted(tmp_path, [code_reply, "Done."]),
         "--runs-dir", tmp_path / "runs")
    log = (only_run(tmp_path / "runs") / "output" / "agent.log").read_text()
    assert_only_the_gateway(log)
    assert network_seen(log)[0] == 2, "own-script opens one connection a call"


@needs_sandbox
def test_every_other_attempt_to_reach_something_is_counted(tmp_path, tiny_task):
    build = build_with(tmp_path, tiny_task, TRIER)
    mlab("run", "tiny", "--build", build, "--agent", "trier", "--model", scripted(tmp_path, ["noted"]),
         "--runs-dir", tmp_path / "runs")
    log = (only_run(tmp_path / "runs") / "output" / "agent.log").read_text()
    assert "gateway: 200" in log and log.count("refused:") >= 3, log[-2000:]
    carried, others = network_seen(log)
    assert carried == 1
    assert "1 TCP connection(s) to something other than the gateway" in others  # the closed port 9
    outside = re.search(r"(\d+) packet\(s\) to addresses outside the sandbox", others)
    udp = re.search(r"(\d+) UDP datagram\(s\)", others)
    # the outside address, then the name lookup: to the machine's resolver (no route) or a local one (UDP)
    assert outside and int(outside.group(1)) >= 1, others
    assert int(outside.group(1)) + (int(udp.group(1)) if udp else 0) >= 3, others
    assert udp, f"the datagram to 127.0.0.1:53 is counted: {others}"
