"""The data model in `mlabc check`: each variant the compiler can make offline is modelled
(build.py), every declaration checked against it (checks.py), and each finding reported at the
declaration it concerns (this module maps a finding's subject to its span in the task's AST).
"""
from __future__ import annotations

from pathlib import Path

from .. import ast as A
from ..values import Reporter
from .build import ModelError, model_variant, modelled
from .checks import problem_findings, task_findings


def _entry(entries, kind):
    return next((e for e in entries if isinstance(e, kind)), None)


def _item(value, text: str):
    """The string node `text` of a list (or the lone string) `value`, else `value` itself."""
    if isinstance(value, A.List):
        return next((i for i in value.items if isinstance(i, A.Str) and i.value == text), value)
    return value


def span_of(decl: A.Task, subject: tuple):
    """Where a finding's subject is declared in the task (the task's name when nowhere closer)."""
    kind = subject[0]
    data = {e.name.value: e for e in decl.entries if isinstance(e, A.Data)}
    metric, submission = _entry(decl.entries, A.Metric), _entry(decl.entries, A.Submission)
    if kind == "metric" and metric is not None:
        return metric.name.span
    if kind == "metric column" and metric is not None:
        return _item(metric.on, subject[1]).span if metric.on is not None else metric.name.span
    if kind == "constraint" and submission is not None:
        rule = next((r for r in submission.rules if isinstance(r.column, A.Str) and r.column.value == subject[1]), None)
        return (rule.column if rule is not None else submission.file).span
    if kind == "problem":
        problem = _entry(decl.entries, A.Problem)
        return (problem.value if problem is not None else decl.name).span
    if kind == "submission" and submission is not None:
        return submission.file.span
    block = data.get(subject[1]) if len(subject) > 1 else None
    if block is not None:
        if kind == "id":
            found = _entry(block.entries, A.IdColumn)
            return (found.value if found is not None else block.name).span
        if kind == "answers":
            found = _entry(block.entries, A.Answers)
            return _item(found.value, subject[2]).span if found is not None else block.name.span
        found = _entry(block.entries, A.Source)
        return (found.value if found is not None else block.name).span
    return decl.name.span


def check_task_data(decl: A.Task, ir: dict, root: Path, report: Reporter) -> None:
    """Model each offline variant of the task and report what its declarations get wrong; the
    task's Python the runtime would run is checked beside (scripts.py)."""
    from .scripts import check_demo_scripts, check_evaluator

    check_demo_scripts(decl, ir, root, report)
    check_evaluator(decl, ir, root, report)
    models = []
    for name, variant in (ir.get("data") or {}).items():
        if not modelled(name, variant):
            continue
        try:
            model = model_variant(root, name, variant)
        except ModelError as problem:
            report.error("E566", f"data `{name}` cannot be made: {problem}", span_of(decl, ("data", name)),
                         hint="fix the source: mlab would fail to prepare it the same way")
            continue
        models.append(model)
        for finding in task_findings(ir, name, model):
            report.error(finding.code, finding.message, span_of(decl, finding.subject), hint=finding.hint)
    for finding in problem_findings(ir, models):
        report.error(finding.code, finding.message, span_of(decl, finding.subject), hint=finding.hint)
