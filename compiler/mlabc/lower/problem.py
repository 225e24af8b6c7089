"""The problem text against the declared submission: what the agent reads must name the file
and every column the harness will check, and no other known column as one to submit.

An agent follows the prompt; a problem that asks for other columns than `submission ...
columns [...]` makes a faithful agent fail Validate Submission and scoring, and the run would
be judged the agent's failure."""
from __future__ import annotations

import csv
import re
from pathlib import Path

from .. import ast as A
from ..values import Reporter

# the end of the sentence that names the submission file: a full stop before a capital or the end
_SENTENCE_END = re.compile(r"\.(?=\s+[A-Z(\"'`]|\s*$)")


def submission_passage(problem: str, file: str) -> str | None:
    """The problem's text from its first mention of the submission file to the end of that
    sentence, or None when the file is not mentioned."""
    start = problem.find(file)
    if start < 0:
        return None
    end = _SENTENCE_END.search(problem, start + len(file))
    return problem[start:end.start() if end else len(problem)]


def names(text: str, column: str) -> bool:
    """Does `text` hold `column` as a word of its own (not inside a longer name)?"""
    if column not in text:  # most of a table's columns: no pattern to compile
        return False
    return re.search(rf"(?<![\w.-]){re.escape(column)}(?![\w-])", text) is not None


def _header(path: Path) -> list[str]:
    """The column names of a bundled CSV table's first line; [] when it cannot be read
    (the data checks say why)."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as file:
            return [name.strip() for name in next(csv.reader(file), [])]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def check_problem_text(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """E513 where the problem and `submission ... columns [...]` disagree."""
    problem, submission = ir["problem"], ir["submission"]
    if not problem or not submission or not submission["file"] or not submission["columns"]:
        return
    entry = next(e for e in decl.entries if isinstance(e, A.Problem))
    file, declared = submission["file"], submission["columns"]
    listed = ", ".join(declared)
    passage = submission_passage(problem, file)
    if passage is None:
        report.error("E513", f"the problem never names the submission file {file!r}", entry.value.span,
                     hint=f"say what to write, e.g. \"write {file} with the columns {listed}\"")
        return
    missing = [column for column in declared if not names(passage, column)]
    for column in missing:
        report.error("E513", f"the problem's sentence about {file} does not name submission column `{column}`",
                     entry.value.span, hint=f"the submission declares the columns {listed}: name each where the "
                                            f"problem says what {file} holds")
    # the columns the task's data is known to hold: answers, ids, scored columns, a bundled header
    known = set(ir["metric"]["columns"] if ir["metric"] else ())
    for variant in ir["data"].values():
        known |= set(variant["answers"]) | ({variant["id"]} if variant["id"] else set())
        source = variant["source"] or {}
        if source.get("kind") == "csv":
            known |= set(_header(root / source["value"]))
    for column in sorted(known - set(declared)):
        if names(passage, column):
            report.error("E513", f"the problem asks for column `{column}` in {file}, which the submission does "
                         "not declare", entry.value.span, hint=f"the submission declares the columns {listed}")
