"""The relay inside the sandbox: loopback TCP → the gateway's Unix socket, then the agent's command.

    python -I relay.py SOCKET PORT COMMAND

The sandbox has a network namespace of its own with loopback only, so 127.0.0.1:PORT, served
here, is the one address an agent can reach, and what it carries goes to the gateway's socket,
bound into the sandbox. The relay listens first, then runs COMMAND with /bin/sh, and exits with
its exit status. This file is copied into the sandbox and run by the agent environment's
interpreter: it uses the standard library only, never mlab.
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


def _serve(listener: socket.socket, socket_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
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


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: relay.py SOCKET PORT COMMAND", file=sys.stderr)
        return 2
    socket_path, port, command = argv[0], int(argv[1]), argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, socket_path), daemon=True).start()
    sys.stdout.flush()
    return subprocess.call(["/bin/sh", "-c", command])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
