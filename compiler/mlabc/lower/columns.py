"""Column constraints of a submission (`submission ... columns [...] { column ... }`) → their IR,
with the checks that need only the task: E516 (the column), E517 (the form), E518 (a rule no
value can meet) and E519 (a vocabulary file the runtime could not read, or one the agent could
change).

The IR of each rule (the runtime's `mlab.scoring.constraints` reads it):
  {"column": "categories", "kind": "ranking", "at_most": 20, "vocabulary_file": "category_key.csv",
   "vocabulary_column": "id"}
  {"column": "label", "kind": "label", "vocabulary": ["0", "1"]}
  {"column": "age", "kind": "integer", "min": 0, "max": 120}
  {"column": "osd", "kind": "probability"}
"""
from __future__ import annotations

import csv
import fnmatch
import io
from pathlib import Path

from .. import ast as A
from ..values import Reporter, did_you_mean
from .data_files import normalise_pattern

KINDS = ("ranking", "label", "integer", "number", "probability")
COUNT_WORDS = ("max", "exactly")
USAGE = {"ranking": 'column "categories" ranking max 20 from "category_key.csv:id"',
         "label": 'column "label" label from ["0", "1"]',
         "integer": 'column "age" integer from 0 to 120',
         "number": 'column "price" number from 0 to 1000000',
         "probability": 'column "p" probability'}


def lower_column_rules(entry: A.Submission, declared: list[str], report: Reporter) -> list[dict]:
    """The rules of a submission's block, each checked on its own; the column checks that need the
    data variants (the id column) and the files (E519) come later, in check_column_rules."""
    rules: list[dict] = []
    seen: set[str] = set()
    for rule in entry.rules:
        column = report.string(rule.column, "a `column` constraint")
        if column is None:
            continue
        if column not in declared:
            report.error("E516", f"constraint on column `{column}`, which the submission does not declare",
                         rule.column.span, hint=(did_you_mean(column, declared, "declared columns") if declared
                                                 else "declare the columns first: `submission \"submission.csv\" "
                                                      "columns [\"id\", ...]`"))
            continue
        if column in seen:
            report.error("E516", f"column `{column}` is constrained twice", rule.column.span,
                         hint="give each column one `column` line")
            continue
        seen.add(column)
        lowered = _lower_rule(rule, column, report)
        if lowered is not None:
            rules.append(lowered)
    return rules


def _lower_rule(rule: A.ColumnRule, column: str, report: Reporter) -> dict | None:
    kind = rule.kind_.value
    if kind not in KINDS:
        report.error("E517", f"unknown constraint `{kind}` on column `{column}`", rule.kind_.span,
                     hint=did_you_mean(kind, KINDS, "constraints"))
        return None
    usage = f"write e.g. `{USAGE[kind]}`"
    out: dict = {"column": column, "kind": kind}
    if rule.count is not None and kind != "ranking":
        report.error("E517", f"`{rule.count.value}` counts the items of a ranking, not of a{'n' if kind[0] in 'aeiou' else ''} "
                     f"{kind}", rule.count.span, hint=usage)
        return None
    if kind in ("ranking", "label"):
        return _lower_vocabulary_rule(rule, out, report, usage)
    if kind == "probability":
        if rule.low is not None:
            report.error("E517", "a probability is a number from 0 to 1; it takes no `from`", rule.low.span,
                         hint="for another range write `number from LOW to HIGH`")
            return None
        return out
    return _lower_range(rule, out, report, usage)


def _lower_vocabulary_rule(rule: A.ColumnRule, out: dict, report: Reporter, usage: str) -> dict | None:
    kind, column = out["kind"], out["column"]
    if rule.count is not None:
        word = rule.count.value
        if word not in COUNT_WORDS:
            report.error("E517", f"a ranking's count is `max N` or `exactly N`, not `{word}`", rule.count.span,
                         hint=did_you_mean(word, COUNT_WORDS) or usage)
            return None
        count = report.integer(rule.count_value, f"`{word}`", minimum=None)
        if count is None:
            return None
        if count < 1:
            report.error("E518", f"a ranking of `{column}` must hold at least 1 item, not {word} {count}",
                         rule.count_value.span, hint=usage)
            return None
        out["at_most" if word == "max" else "exactly"] = count
    if rule.low is None:
        report.error("E517", f"a {kind} constraint needs its vocabulary: `from [\"a\", \"b\"]` or `from \"file.csv:column\"`",
                     rule.kind_.span, hint=usage)
        return None
    if rule.high is not None:
        report.error("E517", f"`to` bounds an integer or number range, not a {kind}", rule.high.span, hint=usage)
        return None
    if isinstance(rule.low, A.Str):
        file, _, name = rule.low.value.partition(":")
        if name and not file.lower().endswith(".csv"):
            report.error("E517", f"`:{name}` names a column, and {file!r} is not a CSV file", rule.low.span,
                         hint="a CSV vocabulary is `\"file.csv:column\"`; any other file holds one item per line")
            return None
        out["vocabulary_file"] = normalise_pattern(file)
        out["vocabulary_column"] = name or None
        return out
    items = report.string_list(rule.low, "vocabulary items")
    if items is None:
        return None
    return _inline_vocabulary(rule, out, items, report)


def _inline_vocabulary(rule: A.ColumnRule, out: dict, items: list[str], report: Reporter) -> dict | None:
    if not items:
        report.error("E518", f"the vocabulary of `{out['column']}` is empty, so no value can meet it", rule.low.span)
        return None
    seen: set[str] = set()
    for item, value in zip(items, rule.low.items):
        if item.strip() != item or not item or (out["kind"] == "ranking" and " " in item):
            report.error("E518", f"vocabulary item {item!r} cannot be written in a submission "
                         + ("(a ranking's items are separated by spaces)" if out["kind"] == "ranking"
                            else "(values are read without surrounding spaces)"), value.span)
            return None
        if item in seen:
            report.error("E518", f"vocabulary item {item!r} is listed twice", value.span)
            return None
        seen.add(item)
    if out.get("exactly", 0) > len(items):
        report.error("E518", f"a ranking of exactly {out['exactly']} distinct items cannot be drawn from a "
                     f"vocabulary of {len(items)}", rule.count_value.span)
        return None
    out["vocabulary"] = items
    return out


def _lower_range(rule: A.ColumnRule, out: dict, report: Reporter, usage: str) -> dict | None:
    kind, column = out["kind"], out["column"]
    for value, key in ((rule.low, "min"), (rule.high, "max")):
        if value is None:
            continue
        if kind == "integer":
            number = report.integer(value, f"an integer range's `{'from' if key == 'min' else 'to'}`", minimum=None)
        else:
            number = report.number(value, f"a number range's `{'from' if key == 'min' else 'to'}`")
        if number is None:
            return None
        out[key] = number
    if "min" in out and "max" in out and out["min"] > out["max"]:
        report.error("E518", f"the range of `{column}` is empty: from {out['min']} to {out['max']}",
                     rule.span, hint=f"the first bound is the lowest value allowed; {usage}")
        return None
    return out


def check_column_rules(entry: A.Submission, ir: dict, root: Path, report: Reporter) -> None:
    """The checks that need the rest of the task: a metric scored from the submission table (E517),
    no rule on an id column (E516), and each vocabulary file a starter or public file of every
    variant, read-only, holding its column (E519)."""
    submission = ir.get("submission") or {}
    rules = {r["column"]: r for r in submission.get("constraints") or ()}
    if not rules:
        return
    metric = ir.get("metric")
    if metric and metric["kind"] != "tabular" and entry.rules:
        how = {"evaluator": "computed by the task's evaluator", "timed": "a timing of the submitted script"}
        report.error("E517", f"column constraints check a submission table, and metric `{metric['name']}` is "
                     f"{how.get(metric['kind'], metric['kind'])}, not scored from one", entry.rules[0].span,
                     hint="remove the `{ column ... }` block; the task's own scorer checks what it reads")
        return
    ids = {v["id"] for v in ir["data"].values() if v.get("id")}
    by_column = {r.column.value: r for r in entry.rules if isinstance(r.column, A.Str)}
    for column, rule in list(rules.items()):
        if column in ids:
            report.error("E516", f"`{column}` is the id column: its values are checked against the test ids, so it "
                         f"takes no {rule['kind']} constraint", by_column[column].column.span)
            continue
        if "vocabulary_file" in rule:
            _check_vocabulary_file(by_column[column], rule, ir, root, report)


def _check_vocabulary_file(node: A.ColumnRule, rule: dict, ir: dict, root: Path, report: Reporter) -> None:
    file, span = rule["vocabulary_file"], node.low.span
    starter = root / ir["starter"] if ir.get("starter") else None
    on_disk = starter / file if starter is not None and (starter / file).is_file() else None
    variants = [name for name, v in ir["data"].items() if file not in v["public"]]
    if on_disk is None and variants:
        report.error("E519", f"vocabulary file {file!r} is neither a starter file nor a public file of data "
                     f"`{variants[0]}`", span, hint="name a file the workspace holds in every data variant, "
                                                    "e.g. one listed in `public [...]`")
        return
    if not any(fnmatch.fnmatchcase(file, pattern) for pattern in ir.get("read_only") or ()):
        report.error("E519", f"vocabulary file {file!r} is not read-only, so the agent's copy could come to differ "
                     "from the task's, which its submission is checked against", span, hint=f"add {file!r} to `read_only [...]`")
        return
    if on_disk is not None:
        _check_vocabulary_contents(on_disk, rule, span, report)


def _check_vocabulary_contents(path: Path, rule: dict, span, report: Reporter) -> None:
    """A starter vocabulary file's column and size, read as the runtime reads it."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        report.error("E519", f"vocabulary file {rule['vocabulary_file']!r} cannot be read as UTF-8 text: {error}", span)
        return
    column = rule.get("vocabulary_column")
    if path.suffix.lower() == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        header = [h.strip() for h in rows[0]] if rows else []
        name = column or (header[0] if header else None)
        if name not in header:
            report.error("E519", f"vocabulary file {rule['vocabulary_file']!r} has no column `{name}`", span,
                         hint="its columns: " + ", ".join(header) if header else None)
            return
        index = header.index(name)
        items = {row[index].strip() for row in rows[1:] if len(row) > index and row[index].strip()}
    else:
        items = {line.strip() for line in text.splitlines() if line.strip()}
    if not items:
        report.error("E518", f"vocabulary file {rule['vocabulary_file']!r} holds no items", span)
    elif rule.get("exactly", 0) > len(items):
        report.error("E518", f"a ranking of exactly {rule['exactly']} distinct items cannot be drawn from the "
                     f"{len(items)} items of {rule['vocabulary_file']!r}", span)
