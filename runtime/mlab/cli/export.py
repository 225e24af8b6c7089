"""`mlab export`: write runs in another tool's format (ATIF trajectories, Inspect AI logs, an
MLE-bench grading report).

The work is in the library (mlab.export); this picks the format and says what was written.
"""
from __future__ import annotations

import sys
from pathlib import Path

from mlab.errors import EXIT_OK


def add_arguments(parser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders (inspect, mle-bench: or folders "
                        "holding runs)")
    parser.add_argument("--to", required=True, choices=("atif", "inspect", "mle-bench"), help="the format to "
                        "write (mle-bench: medals of the runs of tasks that declare thresholds or a leaderboard "
                        "file, the others skipped with the reason)")
    parser.add_argument("-o", "--output", metavar="FILE", help="the new file (atif and mle-bench default: "
                        "stdout; inspect: FILE.eval for one task, agent and model, else a new folder of .eval logs)")


def main(args) -> int:
    if args.to == "atif":
        from mlab.export.atif import write_atif

        written = write_atif([Path(p) for p in args.runs], Path(args.output) if args.output else None)
    elif args.to == "mle-bench":
        from mlab.export.mlebench import write_mlebench

        written, skipped = write_mlebench([Path(p) for p in args.runs], Path(args.output) if args.output else None)
        for line in skipped:
            print(line, file=sys.stderr)
    else:
        from mlab.export.inspect_log import write_inspect

        written = write_inspect([Path(p) for p in args.runs], Path(args.output) if args.output else None)
    for line in written:
        print(line)
    return EXIT_OK
