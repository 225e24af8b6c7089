"""`mlab eval`, `mlab report` and `mlab view`: what researchers read after runs.

The work is in the library (mlab.reports, mlab.viewer); these functions parse arguments,
call it and say what was written.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from mlab.errors import EXIT_OK, StorageError, UsageError


def add_parsers(verbs) -> None:
    evaluate = verbs.add_parser("eval", help="score runs: one row per run (final and best score, usage, failures)")
    evaluate.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders, or folders holding runs")
    evaluate.add_argument("--intermediate", action="store_true",
                          help="also score every step's snapshot (written to RUN_DIR/scores.jsonl)")
    evaluate.add_argument("-o", "--output", metavar="FILE.csv", help="write every column of the rows as CSV")

    report = verbs.add_parser("report", help="tables and plots over a folder of runs (Markdown, CSV, LaTeX, PNG)")
    report.add_argument("runs_dir", metavar="RUNS_DIR", help="folder holding run folders")
    report.add_argument("-o", "--output", metavar="DIR", help="where the report goes (default RUNS_DIR/report)")
    report.add_argument("--compare", metavar="F:A,F:B",
                        help="paired comparison, e.g. agent:research,agent:react or model:A,model:B")
    report.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default 0)")

    view = verbs.add_parser("view", help="a self-contained HTML page of a run, or an index of a folder of runs")
    view.add_argument("path", metavar="RUN_DIR|RUNS_DIR", help="one run folder, or a folder holding runs")
    view.add_argument("-o", "--output", metavar="FILE",
                      help="the HTML file (default RUN_DIR/view.html, or RUNS_DIR/index.html)")


_SHOWN = [("run", "run_id"), ("task", "task"), ("data", "data_variant"), ("agent", "agent"), ("model", "model"),
          ("seed", "seed"), ("score", "final_score"), ("best", "best_score"), ("baseline", "baseline"),
          ("improvement", "improvement"), ("success", "success"), ("steps", "steps"), ("tokens", "total_tokens"),
          ("cost", "cost"), ("failure", "failure_labels")]


def _cell(column: str, value) -> str:
    if value is None or value == "":
        return "-"
    if column == "improvement":
        return f"{value:+.1%}"
    if column == "cost":
        return f"${value:.4f}"
    if column == "success":
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def print_rows(rows: list[dict]) -> None:
    """An aligned table of the key columns (the CSV has them all)."""
    table = [[header for header, _ in _SHOWN]]
    table += [[_cell(column, row[column]) for _, column in _SHOWN] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_SHOWN))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
    if any(row["demo"] for row in rows):
        print("runs by mlab/demo are DEMONSTRATIONS by the keyless demo model, not agent results")


def write_rows_csv(rows: list[dict], path: Path) -> None:
    try:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    except OSError as problem:
        raise StorageError(f"cannot write {path}: {problem.strerror or problem}") from None


def cmd_eval(args) -> int:
    from mlab.reports.eval import evaluate_runs
    from mlab.reports.runs import load_runs

    runs = load_runs([Path(p) for p in args.runs])

    def progress(run, row):
        if args.intermediate:
            print(f"scored {len(run.scores or [])} snapshots of {run.id}", file=sys.stderr)

    rows = evaluate_runs(runs, intermediate=args.intermediate, on_run=progress)
    print_rows(rows)
    if args.output:
        write_rows_csv(rows, Path(args.output))
        print(f"wrote {len(rows)} row(s) to {args.output}")
    return EXIT_OK


def cmd_report(args) -> int:
    from mlab.reports.render import write_report
    from mlab.reports.compare import parse_compare

    comparison = parse_compare(args.compare) if args.compare else None
    runs_dir = Path(args.runs_dir)
    out_dir = Path(args.output) if args.output else runs_dir / "report"
    report = write_report(runs_dir, out_dir, comparison, seed=args.seed)
    print(f"report written to {report.folder / 'report.md'} ({len(report.files)} files)")
    for note in report.notes:
        print(f"note: {note}")
    return EXIT_OK


def cmd_view(args) -> int:
    from mlab.reports.runs import RUN_JSON
    from mlab.viewer.page import write_run_page
    from mlab.viewer.index import write_index

    path = Path(args.path)
    if not path.is_dir():
        raise UsageError(f"{path} is not a folder; give a run folder or a folder holding runs")
    output = Path(args.output) if args.output else None
    if (path / RUN_JSON).is_file():
        written = write_run_page(path, output or path / "view.html")
        print(f"wrote {written}")
    else:
        written, pages = write_index(path, output or path / "index.html")
        print(f"wrote {written} (an index of {pages} run page(s))")
    return EXIT_OK
