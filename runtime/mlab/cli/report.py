"""`mlab report`: tables and plots over a folder of runs (the work is in mlab.reports)."""
from __future__ import annotations

from pathlib import Path

from mlab.errors import EXIT_OK
from mlab.text import printable


def add_arguments(parser) -> None:
    parser.description = ("Tables and plots over a folder of runs: success and improvement per task and over tasks, "
                          "efficiency, compute, failures, paired comparisons; the normalised score, gap closed, "
                          "medals and AUP where tasks declare reference points; the cost-score frontier with score "
                          "per dollar (an unpriced model's cost is 'unknown price', never $0). See docs/reports.md.")
    parser.add_argument("runs_dir", metavar="RUNS_DIR", help="folder holding run folders")
    parser.add_argument("-o", "--output", metavar="DIR", help="where the report goes (default RUNS_DIR/report)")
    parser.add_argument("--compare", metavar="F:A,F:B[,F:C...]",
                        help="paired comparison, e.g. agent:research,agent:react or model:A,model:B; with more "
                             "sides the first is compared with each other one")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default 0)")
    parser.add_argument("--by-version", action="store_true", help="report runs of one task made on different "
                        "task versions (or data) side by side, instead of refusing to pool them")


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
