"""What the sandbox's network saw during an external agent's command, as the relay writes it at the
end of the agent's log (runtime/mlab/external/relay.py): the connections it carried to the gateway
and every other attempt, counted by the sandbox's own network namespace."""
from __future__ import annotations

import re

LINE = re.compile(r"^mlab: network: (\d+) connection\(s\) to the gateway; (no other attempt|other attempts: .*)$",
                  re.MULTILINE)


def network_seen(log: str) -> tuple[int, str]:
    """(connections to the gateway, "no other attempt" or "other attempts: ...") from the relay's line,
    the last one in the log; an AssertionError naming the log's end when there is none."""
    found = LINE.findall(log)
    assert found, f"the relay wrote no network line at the end of the agent's log: {log[-1500:]}"
    carried, others = found[-1]
    return int(carried), others


def assert_only_the_gateway(log: str) -> None:
    """The agent's command reached the gateway and tried nothing else (no name lookup, no other port,
    no outside address), whatever its language."""
    carried, others = network_seen(log)
    assert carried >= 1 and others == "no other attempt", f"the agent tried to reach something else: {others}"
