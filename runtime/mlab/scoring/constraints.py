"""Column constraints of a submission (`submission ... { column ... }`, docs/language.md#column-constraints):
a ranking of distinct items from a vocabulary, a label from a closed set, an integer or number in
a range, a probability.

`submission.check_submission` applies them, so Validate Submission and scoring refuse the same
rows with the same words: the row (counted from 1 after the header), its id, the column, the
value and the rule, e.g. "row 3 (id 17), column categories: 'p99' appears twice; 'banana' is
not in the vocabulary". A refused submission is a format error, never a score.

A vocabulary file is never read from the workspace: preparation keeps the task's copy beside the
private answers (mlab.data.vocabulary), and that copy is read. The compiler has made sure the
workspace's file is read-only too (E519), so the agent reads what its submission is checked
against. A copy that cannot be read is the task's fault (VocabularyError, a DataError).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mlab.documents.task import Constraint
from mlab.errors import DataError

MAX_VOCABULARY_BYTES = 20 * 2**20
EXAMPLE_ROWS = 5      # rows shown when many break a rule
EXAMPLE_VALUES = 3    # offending items shown for one row


class VocabularyError(DataError):
    """A vocabulary file the task names could not be read (a fault of the task)."""


@dataclass(frozen=True)
class Rule:
    """One column's constraint, with its vocabulary read."""

    column: str
    kind: str
    low: float | None = None
    high: float | None = None
    at_most: int | None = None
    exactly: int | None = None
    vocabulary: frozenset | None = None
    source: str = ""  # where the vocabulary comes from, as the messages name it

    def describe(self) -> str:
        """The rule as a sentence's end: "a ranking of at most 20 distinct items of ..."."""
        if self.kind == "probability":
            return "a probability (a number from 0 to 1)"
        if self.kind in ("integer", "number"):
            what = "an integer" if self.kind == "integer" else "a number"
            if self.low is not None and self.high is not None:
                return f"{what} from {_number(self.low)} to {_number(self.high)}"
            return what + (f" of at least {_number(self.low)}" if self.low is not None else "")
        if self.kind == "label":
            return f"a label of {self.source}"
        count = (f"exactly {self.exactly} " if self.exactly else f"at most {self.at_most} " if self.at_most else "")
        return f"a ranking of {count}distinct items of {self.source}, separated by spaces"


def load_rules(constraints: Sequence[Constraint], private_dir: Path | None) -> list[Rule]:
    """The task's constraints (mlab.documents.Constraint) as Rules, their vocabulary files read
    from the task's copies in `private_dir` (the run's, or the prepared variant's, private folder)."""
    rules = []
    for c in constraints:
        vocabulary, source = None, ""
        if c.vocabulary is not None:
            vocabulary = frozenset(_canonical(c.kind, v) for v in c.vocabulary)
            source = "the vocabulary [" + ", ".join(c.vocabulary[:6]) + (", ..." if len(c.vocabulary) > 6 else "") + "]"
        elif c.vocabulary_file:
            items = read_vocabulary(private_dir, c.vocabulary_file, c.vocabulary_column)
            vocabulary = frozenset(_canonical(c.kind, v) for v in items)
            column = c.vocabulary_column
            source = c.vocabulary_file + (f" column {column}" if column else "")
        rules.append(Rule(c.column, c.kind, c.min, c.max, c.at_most, c.exactly, vocabulary, source))
    return rules


def read_vocabulary(private_dir: Path | None, rel: str, column: str | None) -> list[str]:
    """The items of a vocabulary file, from the task's copy beside the private answers: a CSV
    file's column (its first if none is named), or the lines of any other file."""
    from mlab.data.vocabulary import VOCABULARY_DIR

    path = Path(private_dir or ".") / VOCABULARY_DIR / rel
    try:
        if path.stat().st_size > MAX_VOCABULARY_BYTES:
            raise VocabularyError(f"the task's vocabulary file {rel} is larger than {MAX_VOCABULARY_BYTES // 2**20} MB")
        text = path.read_text(encoding="utf-8-sig")
    except OSError as why:
        raise VocabularyError(f"the task's copy of its vocabulary file {rel} cannot be read "
                              f"({why.strerror or why}); prepare the task's data again") from None
    except UnicodeDecodeError:
        raise VocabularyError(f"the task's vocabulary file {rel} is not UTF-8 text") from None
    if not rel.lower().endswith(".csv"):
        return [line.strip() for line in text.splitlines() if line.strip()]
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]] if rows else []
    name = column or (header[0] if header else None)
    if name not in header:
        raise VocabularyError(f"the task's vocabulary file {rel} has no column `{name}` (found {header})")
    index = header.index(name)
    return [row[index].strip() for row in rows[1:] if len(row) > index and row[index].strip()]


def _number(value: float) -> str:
    """A bound as the task wrote it: 120, not 120.0; 0.5 as 0.5."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


def _canonical(kind: str, value) -> str:
    """How a value is compared with a vocabulary: a ranking's items exactly as written (the
    ranking metrics compare them so), a label as the label metrics do (1, 1.0 and "1" are one)."""
    if kind == "label":
        from mlab.scoring.metrics.values import label_key

        return label_key(value)
    return str(value).strip()


def rule_problems(table, id_column: str, rules: Sequence[Rule]) -> dict[str, str]:
    """{column: what is wrong with it} for each column of `table` (text cells, the file's row order)
    that breaks its rule; columns that keep theirs are absent."""
    from mlab.scoring.metrics.values import is_missing

    found = {}
    for rule in rules:
        if rule.column not in table.columns:
            continue
        bad = []
        for row, (key, cell) in enumerate(zip(table[id_column], table[rule.column]), start=1):
            text = "" if is_missing(cell) else str(cell).strip()
            faults = cell_faults(rule, text)
            if faults:
                bad.append(f"row {row} (id {str(key).strip()}), column {rule.column}: {faults}")
        if bad:
            shown = "; ".join(bad[:EXAMPLE_ROWS]) + ("; ..." if len(bad) > EXAMPLE_ROWS else "")
            found[rule.column] = f"{len(bad)} row(s) break the rule of `{rule.column}` ({rule.describe()}): {shown}"
    return found


def cell_faults(rule: Rule, text: str) -> str:
    """What is wrong with one cell under `rule`, or "" when nothing is."""
    if rule.kind == "ranking":
        return _ranking_faults(rule, text)
    if rule.kind == "label":
        if not text:
            return "the value is empty"
        return "" if _canonical("label", text) in rule.vocabulary else f"{text!r} is not in the vocabulary"
    if not text:
        return "the value is empty"
    try:
        number = float(text)
    except ValueError:
        return f"{text!r} is not a number"
    if not math.isfinite(number):
        return f"{text!r} is not a finite number"
    if rule.kind == "integer" and not number.is_integer():
        return f"{text!r} is not an integer"
    low, high = (0.0, 1.0) if rule.kind == "probability" else (rule.low, rule.high)
    if low is not None and number < low:
        return f"{text!r} is below {_number(low)}"
    if high is not None and number > high:
        return f"{text!r} is above {_number(high)}"
    return ""


def _ranking_faults(rule: Rule, text: str) -> str:
    items = text.split()
    faults = []
    seen, twice = set(), []
    for item in items:
        if item in seen and item not in twice:
            twice.append(item)
        seen.add(item)
    faults += [f"{item!r} appears {'twice' if items.count(item) == 2 else f'{items.count(item)} times'}"
               for item in twice[:EXAMPLE_VALUES]]
    unknown = [item for item in dict.fromkeys(items) if rule.vocabulary is not None and item not in rule.vocabulary]
    if unknown:
        shown = ", ".join(repr(i) for i in unknown[:EXAMPLE_VALUES]) + (", ..." if len(unknown) > EXAMPLE_VALUES else "")
        faults.append(f"{shown} {'is' if len(unknown) == 1 else 'are'} not in the vocabulary")
    if rule.exactly is not None and len(items) != rule.exactly:
        faults.append(f"{len(items)} item(s), not exactly {rule.exactly}")
    elif rule.at_most is not None and len(items) > rule.at_most:
        faults.append(f"{len(items)} items, more than {rule.at_most}")
    return "; ".join(faults)


def answer_problems(task, variant_name: str, private_dir: Path) -> list[str]:
    """What in the task's own answers breaks its column constraints (empty when nothing does): a
    task whose answers break a rule would refuse a perfect submission, so `mlab audit` reports it
    as the task's fault. Only the constrained columns the answers hold are checked."""
    import pandas as pd

    submission = task.view.submission
    if submission is None or not submission.constraints:
        return []
    variant = task.variant(variant_name)
    path = Path(private_dir) / variant.private[0]
    try:
        answers = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        rules = [r for r in load_rules(submission.constraints, private_dir) if r.column in answers.columns]
    except (OSError, ValueError) as error:
        return [f"the answers {path.name} cannot be checked: {error}"]
    answers = answers.rename(columns=lambda c: str(c).strip())
    return [f"the answers {path.name}: {text}" for text in rule_problems(answers, variant.id, rules).values()]
