"""`mlab lock --check RUN`: would this checkout reproduce RUN? Its lock's digests and versions
compared with the current sources, inputs, recompiled artifacts and installed packages."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_FAILED, EXIT_OK
from mlab.text import printable


def add_arguments(parser) -> None:
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    parser.add_argument("--check", action="store_true", required=True,
                        help="compare the lock's digests and versions with this checkout's (exit 1 when any differ)")


def main(args) -> int:
    from mlab.run.lock import checkout_rows, read_lock, render_rows

    lock = read_lock(Path(args.run))
    rows = checkout_rows(lock)
    if not rows:
        print(printable(f"{args.run}: this checkout would reproduce the run (task {lock['task']} version "
                        f"{lock['task_version']}, every digest and version as locked)"))
        return EXIT_OK
    print(printable(render_rows(rows, ("what", "locked", "now"))))   # a lock from elsewhere may hold escapes
    print(f"\n{args.run}: this checkout would not reproduce the run exactly: {len(rows)} "
          f"difference{'s' if len(rows) != 1 else ''}")
    return EXIT_FAILED
