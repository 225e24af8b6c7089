"""`mlab export`: write runs in another tool's format (ATIF trajectories, Inspect AI logs).

The work is in the library (mlab.export); this picks the format and says what was written.
"""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK


def main(args) -> int:
    if args.to == "atif":
        from mlab.export.atif import write_atif

        written = write_atif([Path(p) for p in args.runs], Path(args.output) if args.output else None)
    else:
        from mlab.export.inspect_log import write_inspect

        written = write_inspect([Path(p) for p in args.runs], Path(args.output) if args.output else None)
    for line in written:
        print(line)
    return EXIT_OK
