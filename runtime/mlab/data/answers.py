"""A prepared variant's answers checked against its public test file, before any run uses them.

The answers (private[0]) must give every row an id, no id twice, and exactly the ids of the
public test file (the one public CSV file whose name starts with `test`) when it has the id column: otherwise a submission that
follows the test file is refused at scoring ("test ids are missing") and the task's mistake is
judged the agent's. Both files are read as CSV text, so any size streams through.
"""
from __future__ import annotations

import csv
from pathlib import Path

from mlab.errors import DataError

SHOWN = 3  # ids quoted in a message


def _ids(path: Path, column: str) -> tuple[list[str], int | None]:
    """The values of `column` in a CSV file (None for the line number when it has no such column)."""
    with path.open(encoding="utf-8-sig", newline="") as file:
        rows = csv.reader(file)
        header = [name.strip() for name in next(rows, [])]
        if column not in header:
            return [], None
        at = header.index(column)
        return [row[at].strip() if at < len(row) else "" for row in rows if row], at


def _quoted(values) -> str:
    values = sorted(values)
    shown = ", ".join(repr(v) for v in values[:SHOWN])
    return shown + (f" and {len(values) - SHOWN} more" if len(values) > SHOWN else "")


def answer_problem(answers: Path, test: Path | None, column: str) -> str | None:
    """What is wrong with the answers' ids (and their match with the test file's), or None."""
    ids, at = _ids(answers, column)
    if at is None:
        return f"private {answers.name} has no id column {column!r}"
    empty = [line for line, value in enumerate(ids, 2) if value == ""]
    if empty:
        return f"private {answers.name} has an empty id on line(s) {', '.join(map(str, empty[:SHOWN]))}"
    seen, repeated = set(), set()
    for value in ids:
        (repeated if value in seen else seen).add(value)
    if repeated:
        return f"private {answers.name} repeats the id(s) {_quoted(repeated)}"
    if test is None or not test.is_file() or test.suffix != ".csv":
        return None
    public, at = _ids(test, column)
    if at is None:
        return None  # a test file without ids (the rows are matched by position elsewhere)
    extra, lacking = seen - set(public), set(public) - seen
    if extra or lacking:
        parts = []
        if lacking:
            parts.append(f"public {test.name} has {len(lacking)} id(s) with no answer ({_quoted(lacking)})")
        if extra:
            parts.append(f"private {answers.name} answers {len(extra)} id(s) not in {test.name} ({_quoted(extra)})")
        return "; ".join(parts)
    return None


def check_answer_ids(variant, public: Path, private: Path, where: str) -> None:
    """Raise DataError (a task error: the task's files are wrong, not any agent) on bad answers."""
    column, answer_files = variant.id, variant.private
    if not column or not variant.answers or not answer_files or not answer_files[0].endswith(".csv"):
        return
    answers = private / answer_files[0]
    if not answers.is_file():
        return  # a missing declared file is reported by the declared-files check
    tests = [name for name in variant.public if Path(name).name.startswith("test") and name.endswith(".csv")]
    test = public / tests[0] if len(tests) == 1 else None
    try:
        problem = answer_problem(answers, test, column)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        problem = f"cannot read private {answers.name}: {error}"
    if problem:
        raise DataError(f"{where}: the answers are not usable: {problem} (E560)")  # mlabc check's code
