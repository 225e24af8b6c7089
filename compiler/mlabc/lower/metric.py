"""A task's `metric` entry → its IR, checked against the metric catalogue (spec/metrics.json):
the metric's name, columns, parameters and direction, and the columns it scores."""
from __future__ import annotations

import json

from .. import ast as A
from ..resources import spec_json
from ..values import Reporter, did_you_mean


def check_metric_columns(ir: dict, entry: A.Metric, report: Reporter) -> None:
    """E408 for a scored column of a tabular metric that the submission does not declare or a data
    variant does not list among its answers: the scorer reads the column from both files, so such
    a task would score a file that breaks its own declaration, or none that follows it."""
    metric, submission = ir["metric"], ir["submission"]
    if not metric or metric["kind"] != "tabular" or entry.on is None:
        return
    declared = submission["columns"] if submission else []
    ids = {variant["id"] for variant in ir["data"].values()}
    answered = set(answers_read(metric))
    for column in metric["columns"]:
        if declared and column not in declared and column not in ids:
            report.error("E408", f"metric column `{column}` is not a column of the submission",
                    entry.on.span, hint=f"the submission declares columns {json.dumps(declared)}: score one of them, "
                                             f"or add `{column}` to `submission ... columns`")
            answered.discard(column)
    for column in sorted(answered):
        for name, variant in ir["data"].items():
            if variant["answers"] and column not in variant["answers"]:
                report.error("E408", f"metric column `{column}` is not among the answers of data `{name}`",
                        entry.on.span, hint=f"data `{name}` declares answers {json.dumps(variant['answers'])}")


ROWS = "rows"  # every tabular metric's parameter: the answers' 0/1 column flagging the scored rows
ROWS_PARAMETER = {"type": "string", "summary": "the answers' column of 0/1 flags naming the rows scored"}


def metric_parameters(name: str) -> dict:
    """The parameters metric `name` takes: the catalogue's, and `rows` for a tabular metric."""
    spec = spec_json("metrics.json")["metrics"].get(name, {})
    accepted = dict(spec.get("parameters", {}))
    if spec.get("kind") == "tabular":
        accepted[ROWS] = ROWS_PARAMETER
    return accepted


def answers_read(metric: dict) -> list[str]:
    """The answers' columns a tabular metric reads besides (or, for a probability table, instead of)
    its scored columns: a probability table's `answer` column, mase's `scale`, the `rows` flag."""
    accepted = metric_parameters(metric["name"])
    params = metric.get("params", {})
    read = [c for c in metric["columns"]]
    if "answer" in accepted and (len(metric["columns"]) > 1
                                 or metric["name"] in ("top_k_accuracy", "proba_accuracy")):
        read = [params.get("answer", accepted["answer"]["default"])]
    for key in ("scale", ROWS):
        if key in accepted and (key in params or "default" in accepted[key]):
            read.append(params.get(key, accepted[key].get("default")))
    return list(dict.fromkeys(read))


def lower_metric(e: A.Metric, ir: dict, report: Reporter) -> None:
    """Set ir["metric"] from a `metric` entry (left None when the name is unknown)."""
    catalogue = spec_json("metrics.json")["metrics"]
    name = e.name.value
    if name not in catalogue:
        report.error("E404", f"unknown metric `{name}`", e.name.span,
                     did_you_mean(name, catalogue, "metrics"))
        return
    spec = catalogue[name]
    columns: list[str] = []
    if e.on is not None:
        if isinstance(e.on, A.List):
            columns = report.string_list(e.on, "metric columns") or []
        else:
            single = report.string(e.on, "`metric ... on`")
            columns = [single] if single is not None else []
    arity = spec["columns"]
    where = e.on.span if e.on is not None else e.name.span
    if arity == "one" and len(columns) != 1:
        report.error("E405", f"metric `{name}` scores exactly one column", where,
                     hint=f'write `metric {name} on "COLUMN"`')
    elif arity == "many" and not columns:
        report.error("E405", f"metric `{name}` needs its columns", where,
                     hint=f'write `metric {name} on ["A", "B"]`')
    elif arity == "none" and columns:
        report.error("E405", f"metric `{name}` scores no column", where, hint="remove `on ...`")
    direction = e.direction.value if e.direction else spec["direction"]
    if e.direction is not None and spec["direction"] is not None and direction != spec["direction"]:
        report.error("E409", f"metric `{name}` is {spec['direction']}, not {direction}", e.direction.span,
                     hint=f"remove `{direction}` (the catalogue's direction is used); a score of your own "
                          "is `metric custom` with an evaluator")
    if direction is None:
        report.error("E308", f"metric `{name}` needs a direction", e.name.span,
                     hint="add lower_is_better or higher_is_better")
    ir["metric"] = {"name": name, "columns": columns, "direction": direction, "kind": spec["kind"]}
    params = metric_params(e, name, metric_parameters(name), report)
    if params:
        ir["metric"]["params"] = params


def metric_params(e: A.Metric, name: str, accepted: dict, report: Reporter) -> dict:
    """The declared `metric NAME(key = value)` parameters, checked against the catalogue's."""
    from .actions import param_value

    params: dict = {}
    for param in e.params:
        key = param.name.value
        if key not in accepted:
            report.error("E403", f"metric `{name}` has no parameter `{key}`", param.name.span,
                         did_you_mean(key, accepted, "parameters") if accepted else "it takes no parameters")
            continue
        value = param_value(param.value, accepted[key]["type"], report, f"parameter `{key}`")
        allowed = accepted[key].get("values")
        if value is not None and allowed and value not in allowed:
            report.error("E405", f"metric `{name}` takes `{key}` among {', '.join(allowed)}",
                         param.value.span, did_you_mean(str(value), allowed, "values"))
        elif value is not None:
            params[key] = value
    return params


def metric_range(name: str) -> tuple[float | None, float | None]:
    """(lowest, highest) score the catalogue allows metric `name`; None where unbounded."""
    low, high = spec_json("metrics.json")["metrics"].get(name, {}).get("range") or (None, None)
    return low, high


def check_baseline_range(decl: A.Task, ir: dict, report: Reporter) -> None:
    """E410 for `baseline VALUE` outside what the metric can score (an F1 of 1.5, an RMSE of -1):
    the improvement of every run would be measured from a score no submission can have."""
    metric, baseline = ir["metric"], ir["baseline"]
    if not metric or not baseline or baseline.get("kind") != "value" or baseline.get("value") is None:
        return
    low, high = metric_range(metric["name"])
    value = baseline["value"]
    if (low is None or value >= low) and (high is None or value <= high):
        return
    entry = next(e for e in decl.entries if isinstance(e, A.BaselineValue))
    bounds = f"from {_bound(low, '-inf')} to {_bound(high, 'inf')}"
    report.error("E410", f"baseline {value:g} is outside the range of metric `{metric['name']}` ({bounds})",
                 entry.value.span, hint="give the score the starter reaches, or `baseline run \"SCRIPT\"` to measure it")


def _bound(value, unbounded: str) -> str:
    if value is None:
        return unbounded
    return str(int(value)) if float(value).is_integer() else str(value)
