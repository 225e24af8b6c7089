"""`mlab report`: tables and plots over a folder of runs (the work is in mlab.reports)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK
from mlab.text import printable


def main(args) -> int:
    from mlab.reports.render import write_report
    from mlab.reports.compare import parse_compare

    comparisons = parse_compare(args.compare) if args.compare else []
    runs_dir = Path(args.runs_dir)
    out_dir = Path(args.output) if args.output else runs_dir / "report"
    report = write_report(runs_dir, out_dir, comparisons, seed=args.seed, by_version=args.by_version)
    print(f"report written to {report.folder / 'report.md'} ({len(report.files)} files)")
    for note in report.notes:
        print(f"note: {printable(note)}")   # notes name runs and what they hold
    return EXIT_OK
