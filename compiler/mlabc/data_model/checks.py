"""Every declaration of a task checked against the model of one variant's data (model.py).

Each finding names the declaration it concerns by a `subject` (a tuple the compiler maps to a
source span: locate.py) and carries a message and a fix. The runtime reads the same findings at
preparation and at scoring (mlab.data.prepare, mlab.scoring.score): a failure they explain is the
task's, never the agent's.

Subjects: ("metric",), ("metric column", NAME), ("submission",), ("constraint", COLUMN),
("id", VARIANT), ("answers", VARIANT, COLUMN), ("data", VARIANT).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .model import DataModel, TableProfile

# what the answers of a catalogue metric's scored columns must hold, by metric: number (every
# answer a number), nonnegative, whole (whole numbers), label (any value), rle and ranking (text,
# empty allowed), text (any text, empty allowed), binary (0 or 1: one probability column), table (a
# probability table: the `answer` column's classes are the columns' names), flags (a label table:
# each scored column's answers 0 or 1)
ANSWER_KINDS = {
    "accuracy": "label", "f1": "label", "precision": "label", "recall": "label",
    "mae": "number", "rmse": "number", "smape1": "number", "mcrmse": "number", "r2": "number", "mape": "number",
    "rmsle": "nonnegative", "qwk": "whole", "dice": "rle", "map_at_k": "ranking",
    "roc_auc": "probability", "log_loss": "probability", "top_k_accuracy": "table", "proba_accuracy": "table",
    "column_roc_auc": "flags", "lwlrap": "flags", "kl_divergence": "number", "label_set_f1": "ranking",
    "kendall_tau": "ranking", "jaccard": "text", "levenshtein": "text", "word_error_rate": "text",
    "pearson": "number", "spearman": "number", "wape": "number", "mase": "number", "mcrmsle": "nonnegative",
    "mcc": "label", "error_rate": "label",
}
EMPTY_ALLOWED = ("rle", "ranking", "text")
SHOWN = 3


@dataclass(frozen=True)
class Finding:
    code: str
    subject: tuple
    message: str
    hint: str | None = None


def canonical(value: str) -> str:
    """A label as the label metrics compare it: 1, 1.0 and "1" are one."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else text


def _quoted(values) -> str:
    values = sorted(values, key=str)
    return ", ".join(repr(v) for v in values[:SHOWN]) + (f" and {len(values) - SHOWN} more" if len(values) > SHOWN else "")


def _tables(variant: dict, model: DataModel) -> tuple[TableProfile | None, TableProfile | None, TableProfile | None]:
    """(train, test, answers) profiles of a tabular variant, each None when absent."""
    public, private = list(variant.get("public") or []), list(variant.get("private") or [])
    answers = model.table("private", private[0]) if private else None
    tables = [(n, model.table("public", n)) for n in public if n.endswith((".csv", ".parquet"))]
    tables = [(n, t) for n, t in tables if t is not None]
    id_column = variant.get("id")
    test = next((t for n, t in tables if n.rsplit("/", 1)[-1].startswith("test") and id_column in t.columns), None)
    answer_columns = set(variant.get("answers") or [])
    train = next((t for n, t in tables if answer_columns and answer_columns <= set(t.columns)), None)
    return train, test, answers


def task_findings(task: dict, variant_name: str, model: DataModel) -> list[Finding]:
    """What is wrong with the task's declarations, given the model of one of its variants."""
    variant = task["data"][variant_name]
    train, test, answers = _tables(variant, model)
    out: list[Finding] = []
    if model.files:
        missing = [f"{side} {n}" for side in ("public", "private") for n in variant.get(side) or []
                   if f"{side}/{n}" not in model.files]
        if missing:
            out.append(Finding("E566", ("data", variant_name), f"data `{variant_name}` does not produce the declared "
                               f"file(s) {', '.join(missing)}", "declare the files the source writes"))
    if answers is not None:
        out += _id_findings(variant_name, variant, test, answers)
        out += _answer_findings(task, variant_name, variant, answers)
        out += _metric_findings(task, variant, answers)
        out += _constraint_findings(task, variant, test, answers, model)
    if train is not None and ANSWER_KINDS.get((task.get("metric") or {}).get("name")) not in EMPTY_ALLOWED:
        out += _training_label_findings(variant_name, variant, train)  # an empty label set or text is a label
    out += _leak_findings(variant_name, variant, model)
    return out


def _id_findings(name: str, variant: dict, test: TableProfile | None, answers: TableProfile) -> list[Finding]:
    id_column = variant.get("id")
    if not id_column:
        return []
    where = f"the answers of data `{name}`"
    ids = answers.ids.get(id_column)
    if ids is None:
        return [Finding("E560", ("id", name), f"{where} have no id column {id_column!r}",
                        "the answers name each test row by the declared `id`: keep that column in the private file")]
    out = []
    blank = sum(1 for v in ids if v in ("", "nan"))
    seen, repeated = set(), set()
    for value in ids:
        (repeated if value in seen else seen).add(value)
    if blank:
        out.append(Finding("E560", ("id", name), f"{where} leave the id {id_column!r} empty on {blank} row(s)",
                           "give every answer row an id, so that a submission row can be matched to it"))
    if repeated:
        out.append(Finding("E560", ("id", name), f"{where} repeat the id(s) {_quoted(repeated)} of {id_column!r}",
                           "each test row needs an id of its own: number the rows, or pick a unique column as `id`"))
    if test is not None and id_column in test.ids and not repeated:
        public = set(test.ids[id_column])
        lacking, extra = public - seen, seen - public
        if lacking or extra:
            parts = []
            if lacking:
                parts.append(f"{len(lacking)} test id(s) have no answer ({_quoted(lacking)})")
            if extra:
                parts.append(f"{len(extra)} answer id(s) are not in the test table ({_quoted(extra)})")
            out.append(Finding("E560", ("id", name), f"the public test table and {where} hold different ids: "
                               + "; ".join(parts), "write the test table and the answers from the same rows"))
    return out


def _answer_findings(task: dict, name: str, variant: dict, answers: TableProfile) -> list[Finding]:
    kind = ANSWER_KINDS.get((task.get("metric") or {}).get("name"))
    out = []
    for column in variant.get("answers") or []:
        profile = answers.columns.get(column)
        if profile is None or not profile.blanks or kind in EMPTY_ALLOWED:
            continue
        out.append(Finding("E561", ("answers", name, column),
                           f"{profile.blanks} of the {answers.rows} answers of `{column}` (data `{name}`) are blank",
                           "a blank answer can never be matched: drop those rows from the test set, or fill them"))
    return out


def _training_label_findings(name: str, variant: dict, train: TableProfile) -> list[Finding]:
    if variant.get("unlabelled"):
        return []  # `answers [...] unlabelled`: a semi-supervised task's training rows may have none
    out = []
    for column in variant.get("answers") or []:
        profile = train.columns.get(column)
        if profile is not None and profile.blanks:
            out.append(Finding("E561", ("answers", name, column),
                               f"{profile.blanks} of the {train.rows} training rows of data `{name}` have no `{column}`",
                               "drop the rows without a label from the source (or the generator), so that the "
                               "starter and every agent train on labelled rows; or, where unlabelled training "
                               "rows are meant (a semi-supervised task), declare them: "
                               f"`answers [\"{column}\"] unlabelled`"))
    return out


def _metric_findings(task: dict, variant: dict, answers: TableProfile) -> list[Finding]:
    metric = task.get("metric") or {}
    name, columns = metric.get("name"), list(metric.get("columns") or [])
    kind = ANSWER_KINDS.get(name)
    if kind is None or metric.get("kind") != "tabular":
        return []
    params = metric.get("params") or {}
    table = kind == "table" or (kind == "probability" and len(columns) > 1)
    if table:
        return _class_table_findings(name, columns, params.get("answer", "label"), answers)
    out = []
    for column in columns:
        profile = answers.columns.get(column)
        if profile is None:
            out.append(Finding("E562", ("metric column", column),
                               f"metric `{name}` scores `{column}`, which the answers do not hold "
                               f"(they hold {', '.join(answers.columns)})",
                               "score a column of the variant's `answers`"))
            continue
        values = [canonical(v) for v in profile.values] if profile.values is not None else None
        problem = None
        if profile.type == "empty":
            continue
        if kind in ("number", "nonnegative", "whole") and profile.type != "number":
            problem = f"holds values that are not numbers ({_quoted(_non_numbers(profile.values or []))})" \
                if profile.values else "holds values that are not numbers"
        elif kind == "nonnegative" and profile.low is not None and profile.low < 0:
            problem = f"goes down to {profile.low:g}, and {name} scores values of at least 0"
        elif kind == "whole" and values is not None and any("." in v for v in values):
            problem = "holds numbers that are not whole, and qwk rates whole numbers"
        elif kind == "probability" and values is not None and not set(values) <= {"0", "1"}:
            problem = f"holds {_quoted(set(values) - {'0', '1'})}, and one probability column is scored against 0 or 1"
        elif kind == "probability" and values is None:
            problem = "holds more than two values, and one probability column is scored against 0 or 1"
        elif kind == "flags" and (values is None or not set(values) <= {"0", "1"}):
            problem = (f"holds {_quoted(set(values) - {'0', '1'})}" if values is not None else "holds more than two values") \
                + f", and {name} scores each label column against 0 or 1"
        if problem:
            out.append(Finding("E562", ("metric column", column), f"metric `{name}` cannot score `{column}`: the answers' "
                               f"`{column}` {problem}", _metric_fix(kind, name)))
    return out


def _metric_fix(kind: str, name: str) -> str:
    if kind == "probability":
        return ("recode the answers as 0 and 1, or score a probability table: one column per class, named as "
                "the classes, with `answer = \"COLUMN\"` naming the class column")
    if kind == "label":
        return f"{name} compares labels"
    if kind == "flags":
        return ("a label table's answers are one 0/1 column per label, named as the submission's columns; "
                "for one class per row, score a probability table: `roc_auc(answer = \"COLUMN\") on [...]`")
    return f"choose a metric for labels (accuracy, f1) or make the answers numbers {name} can score"


def _non_numbers(values) -> list[str]:
    out = []
    for value in values:
        try:
            float(value)
        except ValueError:
            out.append(value)
    return out


def _class_table_findings(name: str, columns: list[str], answer: str, answers: TableProfile) -> list[Finding]:
    profile = answers.columns.get(answer)
    if profile is None:
        return [Finding("E563", ("metric",), f"metric `{name}` reads each row's true class from the answers' "
                        f"`{answer}`, which the answers do not hold (they hold {', '.join(answers.columns)})",
                        f"name the answers' class column: `metric {name}(answer = \"COLUMN\") on [...]`")]
    if profile.values is None:
        return [Finding("E563", ("metric",), f"the answers' `{answer}` holds more distinct classes than the "
                        f"{len(columns)} columns of the probability table", "one column per class, named as the class")]
    classes = {canonical(v) for v in profile.values}
    named = {canonical(c) for c in columns}
    if classes <= named:
        return []
    positional = {str(i) for i in range(len(columns))}
    if classes <= positional:
        message = (f"the answers' `{answer}` holds the classes {_quoted(classes)}, which no column of the probability "
                   f"table {columns} is named after: the classes would be matched to columns by position")
    else:
        message = (f"the answers' `{answer}` holds classes {_quoted(classes - named)} that no column of the "
                   f"probability table {columns} stands for")
    return [Finding("E563", ("metric",), message,
                    "name each probability column after the class it stands for, as the answers write it")]


def _constraint_findings(task: dict, variant: dict, test: TableProfile | None, answers: TableProfile,
                         model: DataModel) -> list[Finding]:
    submission = task.get("submission") or {}
    out = []
    metric = task.get("metric") or {}
    scored = set(metric.get("columns") or [])
    probability = ANSWER_KINDS.get(metric.get("name")) in ("probability", "table")
    for rule in submission.get("constraints") or []:
        column = rule["column"]
        if probability and column in scored and rule["kind"] in ("integer", "label", "ranking"):
            out.append(Finding("E564", ("constraint", column),
                               f"metric `{metric['name']}` reads `{column}` as a probability, but its constraint "
                               f"admits {'integers' if rule['kind'] == 'integer' else rule['kind'] + 's'}",
                               f"declare `column \"{column}\" probability`"))
            continue
        if probability and column in scored and rule["kind"] == "number" and \
                (rule.get("min") is None or rule.get("max") is None or rule["min"] < 0 or rule["max"] > 1):
            out.append(Finding("E564", ("constraint", column),
                               f"metric `{metric['name']}` reads `{column}` as a probability, but its constraint admits "
                               f"numbers from {rule.get('min', '-inf')} to {rule.get('max', 'inf')}",
                               f"declare `column \"{column}\" probability` (from 0 to 1)"))
            continue
        for what, table in (("the answers", answers), ("the public test table", test)):
            profile = table.columns.get(column) if table is not None else None
            if profile is None:
                continue
            problem = _rule_problem(rule, profile, model)
            if problem:
                out.append(Finding("E564", ("constraint", column), f"{what} break the constraint of `{column}`: "
                                   f"{problem}", "a submission that copies them would be refused: "
                                   "widen the constraint, or correct the data"))
    return out


def _rule_problem(rule: dict, profile, model: DataModel) -> str | None:
    kind = rule["kind"]
    values = profile.values
    if profile.type == "empty":
        return None
    if kind in ("integer", "number", "probability"):
        if profile.type != "number":
            return f"it holds values that are not numbers ({_quoted(_non_numbers(values or []))})" if values \
                else "it holds values that are not numbers"
        low, high = (0.0, 1.0) if kind == "probability" else (rule.get("min"), rule.get("max"))
        if low is not None and profile.low is not None and profile.low < low:
            return f"it goes down to {profile.low:g}, below {low:g}"
        if high is not None and profile.high is not None and profile.high > high:
            return f"it goes up to {profile.high:g}, above {high:g}"
        if kind == "integer" and values is not None and any("." in canonical(v) for v in values):
            return "it holds numbers that are not whole"
        return None
    vocabulary = rule.get("vocabulary")
    if vocabulary is None:
        vocabulary = _file_vocabulary(rule, model)
    if vocabulary is None or values is None:
        return None
    if kind == "label":
        unknown = {canonical(v) for v in values} - {canonical(v) for v in vocabulary}
    else:
        unknown = {item for v in values for item in str(v).split()} - set(vocabulary)
    return f"{_quoted(unknown)} {'is' if len(unknown) == 1 else 'are'} not in its vocabulary" if unknown else None


def _file_vocabulary(rule: dict, model: DataModel) -> list[str] | None:
    table = model.table("public", rule.get("vocabulary_file") or "")
    column = rule.get("vocabulary_column")
    if table is None or not column or column not in table.columns:
        return None
    return table.columns[column].values


def _leak_findings(name: str, variant: dict, model: DataModel) -> list[Finding]:
    out = []
    for answer, columns in model.recodings.items():
        for column in columns:
            same = column == answer
            out.append(Finding("E565", ("answers", name, answer),
                               f"the public test table's `{column}` {'is the answer column itself' if same else 'maps one to one onto the answers of `' + answer + '`'} "
                               f"(data `{name}`): a submission can copy it",
                               f"drop `{column}` from the public test table"))
    for answer, ordered in model.id_order.items():
        if ordered:
            out.append(Finding("E565", ("id", name), f"the test rows' ids follow the answers of `{answer}` (data "
                               f"`{name}`): sorted by id, the answers come in order, so the id gives them away",
                               "shuffle the rows before numbering them (or let mlab number them: drop the id "
                               "column from the source)"))
    return out


_DIRECTION = re.compile(r"\b(higher|lower|larger|smaller|greater)\s+(?:values?\s+|scores?\s+)?(?:is|are)\s+better\b",
                        re.IGNORECASE)
_NAME_LIKE = re.compile(r"`([^`\s]+)`|\b([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")


def problem_findings(task: dict, models: list[DataModel]) -> list[Finding]:
    """The problem text against the declarations: the metric's direction it states, and the
    column names it mentions (a name close to a column of the data, but no column, is a slip)."""
    problem = task.get("problem") or ""
    metric = task.get("metric") or {}
    out = []
    direction = metric.get("direction")
    for match in _DIRECTION.finditer(problem):
        said = "higher_is_better" if match.group(1).lower() in ("higher", "larger", "greater") else "lower_is_better"
        if direction and said != direction:
            out.append(Finding("E567", ("problem",), f"the problem says \"{match.group(0)}\", but metric "
                               f"`{metric['name']}` is declared {direction}",
                               f"say \"{direction.replace('_', ' ')}\" in the problem, or correct the metric's direction"))
            break
    columns = {c for model in models for table in model.tables.values() for c in table.columns}
    if not columns:
        return out
    seen = {Path(f).stem for model in models for f in model.files}  # a file named without its suffix
    for match in _NAME_LIKE.finditer(problem):
        word = (match.group(1) or match.group(2)).strip(".,;:()\"'")
        if not word or word in columns or word in seen or "." in word or "/" in word:
            continue
        seen.add(word)
        guess = sorted(c for c in columns if _near(word, c))
        if guess:
            out.append(Finding("E567", ("problem",), f"the problem names `{word}`, which is no column of the "
                               f"task's data", f"did you mean `{guess[0]}`?"))
    return out


def _near(word: str, column: str) -> bool:
    """A slip of `column`: another case, or at most one edit (a swap of neighbours is one) in five characters (two at most)
    (difflib is not imported for this: a one-file check stays without it)."""
    if word.lower() == column.lower():
        return True
    allowed = min(2, len(column) // 5)
    if not allowed or abs(len(word) - len(column)) > allowed:
        return False
    rows = [list(range(len(column) + 1))]
    for i, a in enumerate(word, 1):  # edits, a swap of two neighbours counting as one
        row = [i]
        for j, b in enumerate(column, 1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a != b))
            if i > 1 and j > 1 and a == column[j - 2] and word[i - 2] == b:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1] <= allowed
