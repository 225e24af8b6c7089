"""The relay inside the sandbox: loopback TCP → the gateway's Unix socket, then the agent's command.

    python -I relay.py SOCKET PORT COMMAND

The sandbox has a network namespace of its own with loopback only, so 127.0.0.1:PORT, served
here, is the one address an agent can reach, and what it carries goes to the gateway's socket,
bound into the sandbox. The relay listens first, then runs COMMAND with /bin/sh, and exits with
its exit status. This file is copied into the sandbox and run by the agent environment's
interpreter: it uses the standard library only, never mlab.

When COMMAND has ended, the relay writes one line to its output (the agent's log) saying what the
sandbox's network saw: the connections it carried to the gateway, and every other attempt to reach
anything, read from the namespace's own counters (/proc/net/snmp and snmp6, which start at zero
with the namespace and count every process in it, whatever its language): TCP connections opened
to anything but the relay, packets to an address with no route (any address outside the sandbox,
name lookups included) and UDP datagrams sent (name lookups to a local resolver). Where the
namespace is not one of its own (more interfaces than loopback) nothing is counted or written.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import threading

CHUNK = 1 << 16


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(CHUNK)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                end.shutdown(how)
            except OSError:
                pass


def _serve(listener: socket.socket, socket_path: str, carried: list | None = None) -> None:
    """Carries each connection to the gateway's socket; `carried` (a list) gets one item a connection."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        if carried is not None:
            carried.append(1)
        # A reply's headers and body come in two writes: without TCP_NODELAY, Nagle's algorithm and
        # the client's delayed ACK would hold the second back for tens of milliseconds.
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(socket_path)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _counters() -> dict[str, int] | None:
    """The network namespace's counters (`TcpActiveOpens`, `IpOutNoRoutes`, `Ip6OutNoRoutes`, ...),
    or None where the namespace has an interface other than loopback (not the sandbox's own)."""
    try:
        with open("/proc/net/dev") as dev:
            interfaces = {line.split(":", 1)[0].strip() for line in dev.read().splitlines()[2:] if ":" in line}
        if interfaces != {"lo"}:
            return None
        counters: dict[str, int] = {}
        with open("/proc/net/snmp") as snmp:  # pairs of lines: "Tcp: Name ..." then "Tcp: 1 ..."
            lines = snmp.read().splitlines()
        for names, values in zip(lines[::2], lines[1::2]):
            prefix, *keys = names.split()
            counters.update({prefix.rstrip(":") + key: int(value) for key, value in zip(keys, values.split()[1:])})
        with open("/proc/net/snmp6") as snmp6:  # "Ip6OutNoRoutes 0"
            counters.update({name: int(value) for name, value in (line.split() for line in snmp6 if line.strip())})
        return counters
    except (OSError, ValueError):
        return None


def network_line(carried: int, before: dict[str, int], after: dict[str, int]) -> str:
    """The line that says what the sandbox's network saw between `before` and `after`."""
    def grown(*names: str) -> int:
        return sum(after.get(name, 0) - before.get(name, 0) for name in names)

    others = [(max(grown("TcpActiveOpens") - carried, 0), "TCP connection(s) to something other than the gateway"),
              (grown("IpOutNoRoutes", "Ip6OutNoRoutes"), "packet(s) to addresses outside the sandbox (no route)"),
              (grown("UdpOutDatagrams", "Udp6OutDatagrams", "UdpLiteOutDatagrams", "UdpLite6OutDatagrams"),
               "UDP datagram(s)")]
    tried = ", ".join(f"{count} {what}" for count, what in others if count)
    return (f"mlab: network: {carried} connection(s) to the gateway; "
            + (f"other attempts: {tried}" if tried else "no other attempt"))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: relay.py SOCKET PORT COMMAND", file=sys.stderr)
        return 2
    socket_path, port, command = argv[0], int(argv[1]), argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    carried: list = []
    before = _counters()
    threading.Thread(target=_serve, args=(listener, socket_path, carried), daemon=True).start()
    sys.stdout.flush()
    status = subprocess.call(["/bin/sh", "-c", command])
    after = _counters()
    if before is not None and after is not None:
        print(network_line(len(carried), before, after), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
