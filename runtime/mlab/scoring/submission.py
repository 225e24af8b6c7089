"""Read a submission CSV, check it against the answers, and align it on their ids.

`load_and_validate` either returns the submission as a DataFrame whose rows follow the
answers' ids one for one, or raises SubmissionError whose message says what was wrong
and what was expected: the file, its columns, its ids, its values. A submission is
never half-scored: any problem stops it before a metric sees it.

`load_answers` reads the task's private answers the same way; a broken answers file is
the task's fault, not the agent's, so it raises AnswersError instead.

Values are checked by what the metric needs from each column (see `Metric.kinds_of`):
number (a finite number of magnitude at most MAX_MAGNITUDE, so that no metric overflows),
label (any non-empty text), rle (a run-length encoded mask, empty allowed), ranking
(space-separated items, empty allowed) and text (any text, as written, empty allowed). A task's column constraints (`mlab.scoring.constraints`)
are checked beside them, row by row.

The file is bounded before it is parsed (`_check_shape`): its size, its header's column
count, the length of its longest line (so of every field) and its row count, which may
exceed the number of expected ids by a small multiple only (MAX_ROWS_FACTOR). Validate
Submission and scoring run this same check, so they always agree.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from mlab.errors import DataError, MlabError, first_line
from mlab.scoring.constraints import rule_problems
from mlab.scoring.metrics.tabular import get_metric
from mlab.scoring.metrics.values import MetricError, is_missing, label_key, parse_rle

MAX_SUBMISSION_BYTES = 200 * 1024 * 1024
MAX_ROWS_FACTOR = 2        # rows allowed: this many times the expected ids, plus MAX_ROWS_SLACK
MAX_ROWS_SLACK = 1000
MAX_COLUMNS = 1024         # columns allowed in the header, or twice the expected ones if more
MAX_LINE_BYTES = 1 << 20   # a line, hence a field, of at most 1 MiB (a long run-length mask fits)
MAX_MAGNITUDE = 1e100      # |prediction| at most this: squares of a billion rows stay finite
NUMBER_KINDS = ("number", "probability", "nonnegative")  # a finite number; in [0, 1]; at least 0
EXAMPLES = 5


class SubmissionError(MlabError, ValueError):
    """The submission cannot be scored; the message says what was expected."""


class AnswersError(DataError):
    """The task's private answers are unusable (a fault of the task, not of the submission)."""


def load_and_validate(submission_path: str | Path, answers_path: str | Path, id_column: str,
                      columns: Sequence[str], metric: str | None = None,
                      declared: Sequence[str] = (), params: dict | None = None) -> pd.DataFrame:
    """The submission aligned row for row on the answers' ids, or SubmissionError.

    columns: the predicted columns the metric scores (`metric NAME on ...`); the id
    column, if listed, is skipped. declared: the task's `submission ... columns`, which the
    file must all have. Other columns of the file are ignored. metric: the metric's name,
    which decides how values are checked and converted (numbers become floats); without it
    every value only has to be non-empty.
    """
    predicted = [c for c in columns if c != id_column]
    answers = load_answers(answers_path, id_column, predicted, metric, params)
    return check_submission(submission_path, answers[id_column], id_column, columns, metric, declared)


def check_submission(submission_path: str | Path, ids: Sequence, id_column: str, columns: Sequence[str],
                     metric: str | None = None, declared: Sequence[str] = (),
                     kind: str = "test", rules: Sequence = ()) -> pd.DataFrame:
    """The submission aligned row for row on `ids`, or SubmissionError: the format check alone.

    It needs no answers, only the ids the submission must cover (the answers' ids when
    scoring; the public test file's ids when the agent validates its submission). kind: the
    set those ids belong to, as the messages name it ("test", "validation"). rules: the task's
    column constraints (`mlab.scoring.constraints.load_rules`), checked on every row.
    """
    predicted = [c for c in columns if c != id_column]
    kinds = _value_kinds(metric, predicted)
    ids = pd.Series(list(ids), dtype=object)
    path = Path(submission_path)
    table = _read_submission(path, list(dict.fromkeys([id_column, *declared, *predicted])), len(ids))
    keys = _check_ids(table, ids, id_column, path.name, kind)
    broken = rule_problems(table, id_column, rules) if rules else {}
    aligned = table.assign(_key=keys).set_index("_key").loc[[label_key(v) for v in ids]]
    aligned = aligned.reset_index(drop=True)
    result = pd.DataFrame({id_column: ids.to_numpy()})
    problems = list(broken.values())
    for column in predicted:
        values, problem = _convert(aligned[column], kinds[column], column)
        result[column] = values
        if problem and column not in broken:  # a column's broken rule already says what is wrong
            problems.append(problem)
    if problems:
        raise SubmissionError(f"{path.name}: " + "; ".join(problems))
    return result


def load_answers(answers_path: str | Path, id_column: str, columns: Sequence[str],
                 metric: str | None = None, params: dict | None = None) -> pd.DataFrame:
    """The task's answers: the id column and the columns the metric reads, numbers as floats.

    A missing answer in a number column is kept as NaN: metrics skip such rows. A probability
    table's answers are the one label column its `answer` parameter names.
    """
    path = Path(answers_path)
    scored = [c for c in columns if c != id_column]
    kinds = _value_kinds(metric, scored)
    predicted = scored
    if metric is not None:
        try:
            predicted = get_metric(metric).answer_columns(scored, params)
        except MetricError as error:
            raise AnswersError(str(error)) from None
        kinds = {c: kinds.get(c, "label") for c in predicted}
    try:
        table = _strip_header(pd.read_csv(path, dtype=str, encoding="utf-8-sig"))
    except Exception as error:  # whatever went wrong, the task's answers are unusable
        raise AnswersError(f"the task's answers {path} could not be read: {error}") from None
    absent = [c for c in [id_column, *predicted] if c not in table.columns]
    if absent:
        raise AnswersError(f"the task's answers {path.name} lack column(s) {absent} "
                           f"(found {list(table.columns)})")
    keys = [label_key(v) for v in table[id_column]]
    if "" in keys or len(set(keys)) != len(keys):
        raise AnswersError(f"the task's answers {path.name} have empty or repeated ids in `{id_column}`")
    answers = table[[id_column, *predicted]].reset_index(drop=True)
    for column in predicted:
        if kinds[column] in NUMBER_KINDS:
            # a flag answer may be written True/False (e.g. fathomnet's osd); it means 1/0
            flags = answers[column].map(lambda v: {"True": "1", "False": "0"}.get(label_key(v), v))
            answers[column] = pd.to_numeric(flags, errors="coerce").astype(float)
        elif kinds[column] in ("rle", "ranking", "text"):
            answers[column] = answers[column].fillna("").astype(str)
    return answers


def _value_kinds(metric: str | None, columns: list[str]) -> dict[str, str]:
    if metric is None:
        return {c: "label" for c in columns}
    try:
        entry = get_metric(metric)
        kinds = entry.kinds_of(columns)
    except MetricError as error:
        raise AnswersError(str(error)) from None
    if not kinds:
        raise AnswersError(f"metric `{metric}` is not scored from a submission table")
    return kinds


def _strip_header(table: pd.DataFrame) -> pd.DataFrame:
    """Column names without surrounding spaces, so " SalePrice" still counts."""
    return table.rename(columns=lambda c: str(c).strip())


def _expected_layout(columns: list[str]) -> str:
    return f"a CSV file whose header line is `{','.join(columns)}`"


def _read_submission(path: Path, expected: list[str], wanted_rows: int | None = None) -> pd.DataFrame:
    """The submission as text cells, after checking the file, its shape and its header."""
    layout = _expected_layout(expected)
    if not path.exists():
        raise SubmissionError(f"no submission: {path.name} was not written; expected {layout} "
                              f"with one row per test id")
    if not path.is_file():
        raise SubmissionError(f"{path.name} is a folder, not a file; expected {layout}")
    size = path.stat().st_size
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionError(f"{path.name} is {size / 2**20:.0f} MB, over the "
                              f"{MAX_SUBMISSION_BYTES // 2**20} MB limit for a submission; expected {layout}")
    if size == 0:
        raise SubmissionError(f"{path.name} is empty; expected {layout} and one row per test id")
    _check_shape(path, len(expected), wanted_rows, layout)
    try:
        table = pd.read_csv(path, dtype=str, encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError(f"{path.name} is not a text file; expected {layout}") from None
    except pd.errors.EmptyDataError:
        raise SubmissionError(f"{path.name} holds no header line; expected {layout}") from None
    except Exception as error:  # pandas raises several types for malformed CSV; all mean the same
        reason = first_line(error)
        raise SubmissionError(f"{path.name} could not be read as CSV ({reason}); expected {layout}") from None
    table = _strip_header(table)
    found = list(table.columns)
    absent = [c for c in expected if c not in found]
    if absent:
        raise SubmissionError(f"{path.name} lacks column(s) {absent}: expected columns {expected}, "
                              f"found {found}{_header_hint(found, absent)}")
    return table


def _check_shape(path: Path, expected_columns: int, wanted_rows: int | None, layout: str) -> None:
    """Refuse, before any parsing, a file with too many columns, too long a line or too many rows.

    Lines are counted by their newlines, or their carriage returns where there are more (a file
    of old Mac line ends); a quoted field holding line ends counts more than once, which only errs
    towards refusing sooner. One pass over the bytes in blocks: linear in size.
    """
    import numpy as np

    max_columns = max(MAX_COLUMNS, 2 * expected_columns)
    max_rows = None if wanted_rows is None else MAX_ROWS_FACTOR * wanted_rows + MAX_ROWS_SLACK
    lines = longest = run = returns = 0
    header = b""
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
            if not lines:
                header += block[:ends[0]] if len(ends) else block[:MAX_LINE_BYTES + 1]
            if len(ends):
                longest = max(longest, run + int(ends[0]), int(np.diff(ends).max(initial=0)) - 1)
                run = len(block) - int(ends[-1]) - 1
            else:
                run += len(block)
            longest = max(longest, run)
            lines += len(ends)
            returns += block.count(b"\r")
            if longest > MAX_LINE_BYTES:
                raise SubmissionError(f"{path.name} has a line longer than {MAX_LINE_BYTES // 2**20} MiB, the "
                                      f"limit for one line of a submission; expected {layout}")
            if max_rows is not None and max(lines, returns) > max_rows + 1:
                break
    rows = max(lines - 1 + (run > 0), returns - 1)   # a last line without its line end is a row too
    if max_rows is not None and rows > max_rows:
        raise SubmissionError(f"{path.name} has more than {max_rows:,} rows, the limit for a submission of "
                              f"{wanted_rows:,} ids ({MAX_ROWS_FACTOR} per id and {MAX_ROWS_SLACK:,} more); "
                              f"expected {layout} and one row per id")
    columns = header.count(b",") + 1   # commas inside a quoted name only make the count larger
    if columns > max_columns:
        raise SubmissionError(f"{path.name} has a header of {columns:,} columns, over the limit of "
                              f"{max_columns:,}; expected {layout}")


def _header_hint(found: list[str], absent: list[str]) -> str:
    """A likely reason for a wrong header, or ""."""
    if len(found) == 1 and any(sep in found[0] for sep in (";", "\t", "|")):
        return " (separate columns with commas)"
    if all(_is_number_text(c) for c in found):
        return " (the first line should be the header, not data)"
    near = []
    for wanted in absent:
        same_letters = [c for c in found if c.lower() == wanted.lower()]
        close = same_letters or difflib.get_close_matches(wanted, found, n=1, cutoff=0.6)
        if close:
            near.append(f"`{wanted}` instead of `{close[0]}`")
    return f" (names must match exactly: did you mean {', '.join(near)}?)" if near else ""


def _is_number_text(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _examples(values: Sequence[str]) -> str:
    shown = ", ".join(str(v) for v in list(values)[:EXAMPLES])
    return f"{shown}, ..." if len(values) > EXAMPLES else shown


def _check_ids(table: pd.DataFrame, ids: pd.Series, id_column: str, name: str,
               kind: str = "test") -> list[str]:
    """The canonical id of each submission row, after checking the ids match `ids` one for one.

    Linear in the rows: one pass builds the keys and their counts, dictionaries do the rest.
    """
    from collections import Counter

    keys = [label_key(v) for v in table[id_column]]
    wanted = {label_key(v): v for v in ids}
    problems = []
    counts = Counter(keys)
    empty = counts.pop("", 0)
    if empty:
        problems.append(f"{empty} row(s) have no value in `{id_column}`")
    repeated = [key for key, count in counts.items() if count > 1]
    if repeated:
        problems.append(f"{len(repeated)} id(s) appear more than once (e.g. {_examples(repeated)})")
    missing = [original for key, original in wanted.items() if key not in counts]
    if missing:
        problems.append(f"{len(missing)} of the {len(wanted)} {kind} ids are missing "
                        f"(e.g. {_examples(missing)})")
    extra = [key for key in counts if key not in wanted]
    if extra:
        problems.append(f"{len(extra)} id(s) are not {kind} ids (e.g. {_examples(extra)})")
    if problems:
        raise SubmissionError(f"{name}: " + "; ".join(problems) +
                              f"; expected exactly one row for each of the {len(wanted)} ids of the {kind} set")
    return keys


def _convert(cells: pd.Series, kind: str, column: str) -> tuple[pd.Series, str | None]:
    """The column's values converted for the metric, and what is wrong with them (or None)."""
    if kind == "text":
        return cells.map(lambda v: "" if is_missing(v) else str(v)), None
    if kind in ("rle", "ranking"):
        text = cells.map(lambda v: "" if is_missing(v) else str(v).strip())
        if kind == "ranking":
            return text, None
        bad = []
        for row, value in enumerate(text):
            try:
                parse_rle(value)
            except ValueError as error:
                bad.append((row, value, error))
        if not bad:
            return text, None
        row, value, error = bad[0]
        return text, (f"{len(bad)} value(s) in `{column}` are not run-length encodings "
                      f"`start length start length ...` (e.g. row {row + 1}: {value[:40]!r}: {error})")
    empty = int(sum(is_missing(v) or not str(v).strip() for v in cells))
    if kind == "label":
        labels = cells.map(lambda v: "" if is_missing(v) else str(v).strip())
        return labels, (f"{empty} value(s) in `{column}` are empty or NaN; expected a value in every row"
                        if empty else None)
    numbers = pd.to_numeric(cells.str.strip(), errors="coerce").astype(float)
    not_numbers = [repr(v) for v, n in zip(cells, numbers) if np.isnan(n) and not is_missing(v) and str(v).strip()]
    infinite = int(np.isinf(numbers).sum())
    huge = [repr(v) for v, n in zip(cells, numbers) if np.isfinite(n) and abs(n) > MAX_MAGNITUDE]
    faults = []
    if empty:
        faults.append(f"{empty} value(s) in `{column}` are empty or NaN")
    if not_numbers:
        faults.append(f"{len(not_numbers)} value(s) in `{column}` are not numbers (e.g. {_examples(not_numbers)})")
    if infinite:
        faults.append(f"{infinite} value(s) in `{column}` are infinite")
    if huge:
        faults.append(f"{len(huge)} value(s) in `{column}` are larger in magnitude than {MAX_MAGNITUDE:g} "
                      f"(e.g. {_examples(huge)})")
    if faults:
        return numbers, "; ".join(faults) + f"; expected a finite number in every row of `{column}`"
    low, high, what = {"probability": (0.0, 1.0, "a probability from 0 to 1"),
                       "nonnegative": (0.0, np.inf, "a number of at least 0")}.get(kind, (-np.inf, np.inf, ""))
    outside = [repr(v) for v, n in zip(cells, numbers) if not low <= n <= high]
    if outside:
        return numbers, (f"{len(outside)} value(s) in `{column}` are out of range (e.g. {_examples(outside)}); "
                         f"expected {what} in every row")
    return numbers, None
