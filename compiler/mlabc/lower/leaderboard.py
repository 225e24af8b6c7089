"""A task's `leaderboard` entry → `references.leaderboard` in its IR: the public leaderboard's
scores, read at compile time from a CSV shipped with the task and embedded in the IR, so every
build (and every run's build copy) carries them and reports of old runs need no file.

The reports derive medal thresholds from it by MLE-bench's rule when the task declares no
`thresholds` (mlab.reports.medals.leaderboard_thresholds) and place each score's percentile in it.
Checks: the file is there, inside the task's folder and readable as CSV (E954); it has the
column (E955); every score in the column is a finite number and there is at least one (E956);
the task's metric has a direction and a file sorted best first runs in it (E957); a source (E950).
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from .. import ast as A
from ..values import Reporter, did_you_mean
from .references import source_of

DEFAULT_COLUMN = "score"  # the column of MLE-bench's leaderboard.csv files
MAX_BYTES = 16 * 2**20


def _read(path: Path, name: str, span, report: Reporter, hint: str) -> str | None:
    if not path.is_file():
        report.error("E954", f"leaderboard file {name!r} does not exist", span, hint=hint)
        return None
    try:
        if path.stat().st_size > MAX_BYTES:
            report.error("E954", f"leaderboard file {name!r} is over {MAX_BYTES // 2**20} MiB", span,
                         hint="keep the score column only; the scores are embedded in the build")
            return None
        return path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        report.error("E954", f"leaderboard file {name!r} cannot be read: {exc}", span,
                     hint="a leaderboard is a UTF-8 CSV file with a header row")
        return None


def _scores(text: str, name: str, column: str, e: A.Leaderboard, report: Reporter) -> list[float] | None:
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        report.error("E954", f"leaderboard file {name!r} is not a readable CSV file: {exc}", e.file.span)
        return None
    header = [cell.strip() for cell in rows[0]] if rows else []
    if column not in header:
        span = e.column.span if e.column is not None else e.file.span
        shown = ", ".join(header) if header else "no header row"
        report.error("E955", f"leaderboard file {name!r} has no column {column!r} (it has {shown})", span,
                     did_you_mean(column, header, "columns") if header else None)
        return None
    at = header.index(column)
    scores: list[float] = []
    for line, row in enumerate(rows[1:], start=2):
        cell = row[at].strip() if at < len(row) else ""
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            report.error("E956", f"leaderboard file {name!r}, line {line}: score {cell!r} in column "
                         f"{column!r} is not a number", e.file.span,
                         hint="every row holds one entry's score, a finite number of the task's metric")
            return None
        scores.append(value)
    if not scores:
        report.error("E956", f"leaderboard file {name!r} has no scores in column {column!r}", e.file.span,
                     hint="list one row per team, best first, as the competition's leaderboard shows them")
        return None
    return scores


def lower_leaderboard(e: A.Leaderboard, ir: dict, root: Path, report: Reporter) -> None:
    name = report.string(e.file, "the file of `leaderboard`")
    column = report.string(e.column, "the column of `leaderboard`") if e.column is not None else DEFAULT_COLUMN
    source = source_of(e.source, e.span, report, "`leaderboard`")
    if name is None or column is None:
        return
    path = root / name
    hint = "the path is relative to the folder of the task's file; ship the CSV with the task"
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    if not inside or Path(name).is_absolute():
        report.error("E954", f"leaderboard file {name!r} is outside the task's folder", e.file.span, hint=hint)
        return
    text = _read(path, name, e.file.span, report, hint)
    scores = None if text is None else _scores(text, name, column, e, report)
    if scores is None:
        return
    refs = ir.setdefault("references", {"points": [], "thresholds": None})
    refs["leaderboard"] = {"file": name, "column": column, "source": source, "scores": scores,
                           "_span": e.span}


def check_leaderboard(ir: dict, report: Reporter) -> None:
    """The direction check, once the metric is lowered (called from check_references)."""
    board = (ir.get("references") or {}).get("leaderboard")
    if board is None:
        return
    span = board.pop("_span")
    metric = ir.get("metric") or {}
    direction = metric.get("direction")
    if direction is None:
        report.error("E957", "a leaderboard needs a metric with a direction", span,
                     hint="medals and percentiles rank scores: declare the task's `metric` with "
                          "`higher_is_better` or `lower_is_better`")
        return
    scores = board["scores"]
    lower = direction == "lower_is_better"
    ascending = all(a <= b for a, b in zip(scores, scores[1:]))
    descending = all(a >= b for a, b in zip(scores, scores[1:]))
    if scores[0] != scores[-1] and (descending if lower else ascending):
        word = "lower" if lower else "higher"
        report.error("E957", f"leaderboard file {board['file']!r} runs from {scores[0]:g} to {scores[-1]:g}, "
                     f"worst first, and metric `{metric.get('name')}` is {word} is better", span,
                     hint="a leaderboard lists its best entry first; check the metric's direction "
                          "and the file's order")
