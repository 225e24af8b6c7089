"""`mlab eval`: score runs, one row per run (final and best score, usage, failures).

The work is in the library (mlab.reports); this prints the rows and writes them as CSV.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from mlab.cli import args as shared
from mlab.errors import EXIT_OK, StorageError
from mlab.text import printable


def add_arguments(parser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders, or folders holding runs")
    parser.add_argument("--intermediate", action="store_true",
                        help="also score every step's snapshot (written to RUN_DIR/scores.jsonl)")
    parser.add_argument("--at", action="append", metavar="KIND=B,...",
                        help="score at budgets: what each run would have submitted by then, e.g. time=1h,2h,4h, "
                             "tokens=100k,1M, 'cost=$1,$5' (quoted: the shell expands $1) or a share of the run's "
                             "limit (time=25%%,50%%); several kinds in one option (time=1h,tokens=1M) or repeated; "
                             "cached in RUN_DIR/budgets.json")
    parser.add_argument("-o", "--output", metavar="FILE.csv",
                        help="write every column of the rows as CSV: scores, usage, cost and cost_known, the "
                             "normalised score, gap closed and medal from the task's reference points, per-dollar "
                             "figures and any score_at_* budget scores")
    shared.add_json(parser, "the rows, every column,")


_SHOWN = [("run", "run_id"), ("task", "task"), ("data", "data_variant"), ("agent", "agent"), ("model", "model"),
          ("seed", "seed"), ("score", "final_score"), ("best", "best_score"), ("baseline", "baseline"),
          ("improvement", "improvement"), ("success", "success"), ("steps", "steps"), ("tokens", "total_tokens"),
          ("cost", "cost"), ("failure", "failure_labels")]


def _cell(column: str, value, row: dict | None = None) -> str:
    if column == "cost" and value is None and (row or {}).get("finished"):
        return "unknown price"  # a model without a price in litellm's map: never shown as $0
    if value is None or value == "":
        return "-"
    if column == "improvement":
        return f"{value:+.1%}"
    if column == "cost":
        return f"${value:.4f}"
    if column == "success":
        return "yes" if value else "no"
    if column == "sandboxed":
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _budget_cell(row: dict, name: str) -> str:
    """A budget's score, and a star when it met the task's success rule."""
    score = row.get(f"score_at_{name}")
    if score is None:
        return "-"
    return _cell("score", score) + ("*" if row.get(f"success_at_{name}") else "")


def print_rows(rows: list[dict], budgets=()) -> None:
    """An aligned table of the key columns (the CSV has them all), with each budget's score; a
    `sandbox` column when a run's scripts ran without the sandbox."""
    base = _SHOWN + ([("sandbox", "sandboxed")] if any(row.get("sandboxed") is False for row in rows) else [])
    shown = base + [(f"@{budget.kind}={budget.label}", budget.name) for budget in budgets]
    table = [[header for header, _ in shown]]
    table += [[printable(_cell(column, row.get(column), row) if index < len(base) else _budget_cell(row, column))
               for index, (_, column) in enumerate(shown)] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(shown))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
    bare = [row["run_id"] for row in rows if row.get("sandboxed") is False]
    if bare:
        print(f"NOT SANDBOXED: {len(bare)} run(s) ran scripts without the sandbox (sandbox NO): their scripts could "
              f"read every file this user can, the answers included, and use the network: {', '.join(bare)}")
    if any(row["demo"] for row in rows):
        print("runs by mlab/demo are DEMONSTRATIONS by the keyless demo model, not agent results")
    if budgets:
        print("@KIND=B: the score of what the run would have submitted at that budget (-: no valid "
              "submission by then or not applicable; *: successful by the task's rule)")


def csv_columns(rows: list[dict]) -> list[str]:
    """Every key of every row, in the order first seen: rows may carry different optional columns
    (budget scores `score_at_*` of the budgets a run reached), and each becomes a column."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def write_rows_csv(rows: list[dict], path: Path) -> None:
    try:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=csv_columns(rows), restval="")
            writer.writeheader()
            writer.writerows(rows)
    except OSError as problem:
        raise StorageError(f"cannot write {path}: {problem.strerror or problem}") from None


def main(args) -> int:
    from mlab.reports.eval import evaluate_runs
    from mlab.reports.runs import load_runs

    budgets = []
    if getattr(args, "at", None):
        from mlab.reports.budgets import parse_budgets

        budgets = parse_budgets(args.at)  # a usage error before any run is read
    runs = load_runs([Path(p) for p in args.runs])

    def progress(run, row):
        if args.intermediate:
            print(f"scored {len(run.scores or [])} snapshots of {run.id}", file=sys.stderr)

    rows = evaluate_runs(runs, intermediate=args.intermediate, on_run=progress, at=budgets)
    if getattr(args, "json", False):
        from mlab.cli.args import print_json

        if args.output:
            write_rows_csv(rows, Path(args.output))
        print_json(args, {"rows": rows})
        return EXIT_OK
    print_rows(rows, budgets)
    if args.output:
        write_rows_csv(rows, Path(args.output))
        print(f"wrote {len(rows)} row(s) to {args.output}")
    return EXIT_OK
