"""A task's reference points → `references` in its IR: published or measured scores, each with
where it comes from, and medal thresholds (MLE-bench's gold, silver, bronze and median).

The reports put runs on a common scale with them (docs/reports.md). Every number needs a source
(E950); a reference must beat a declared baseline in the metric's direction (E951); thresholds
must be named by a medal (E953) and ordered from gold down in that direction (E952).
"""
from __future__ import annotations

from .. import ast as A
from ..values import Reporter, did_you_mean

MEDALS = ("gold", "silver", "bronze", "median")  # best first


def source_of(source: A.Value | None, span, report: Reporter, what: str) -> str | None:
    if source is None:
        report.error("E950", f"{what} has no source", span,
                     hint='add `source "..."`: the paper, leaderboard or run the number comes from')
        return None
    text = report.string(source, f"the source of {what}")
    if text is not None and not text.strip():
        report.error("E950", f"{what} has an empty source", source.span,
                     hint="name the paper, leaderboard or run the number comes from")
        return None
    return text


def lower_reference(e: A.Reference, ir: dict, report: Reporter) -> None:
    label = report.name_or_string(e.label, "the label of `reference`")
    value = report.number(e.value, f"reference `{label}`")
    source = source_of(e.source, e.span, report, f"reference `{label}`")
    refs = ir.setdefault("references", {"points": [], "thresholds": None})
    if label is not None and any(p["label"] == label for p in refs["points"]):
        report.error("E302", f"reference `{label}` is given twice", e.label.span)
        return
    if label is not None and value is not None:
        refs["points"].append({"label": label, "value": float(value), "source": source, "_span": e.value.span})


def lower_thresholds(e: A.Thresholds, ir: dict, report: Reporter) -> None:
    out: dict = {}
    given = [item for item in e.items if item.key.value == "source"]
    for entry in e.items:
        name = entry.key.value
        if name == "source":
            continue
        if name not in MEDALS:
            report.error("E953", f"unknown threshold `{name}`", entry.key.span,
                         did_you_mean(name, (*MEDALS, "source"), "thresholds"))
            continue
        if name in out:
            report.error("E302", f"threshold `{name}` is given twice", entry.key.span)
            continue
        value = report.number(entry.value, f"threshold `{name}`")
        if value is not None:
            out[name] = (float(value), entry.value.span)
    if len(given) > 1:
        report.error("E302", "`source` is given twice in `thresholds`", given[1].key.span)
    source = source_of(given[0].value if given else None, e.span, report, "`thresholds`")
    refs = ir.setdefault("references", {"points": [], "thresholds": None})
    refs["thresholds"] = {"values": out, "source": source}


def check_references(ir: dict, report: Reporter) -> None:
    """The direction checks, once the metric and baseline are lowered; leaves plain data in the IR."""
    refs = ir.get("references")
    if refs is None:
        return
    metric = ir.get("metric") or {}
    lower = metric.get("direction") == "lower_is_better"
    baseline = ir.get("baseline") or {}
    start = baseline.get("value") if baseline.get("kind") == "value" else None
    word = "lower" if lower else "higher"
    for point in refs["points"]:
        span = point.pop("_span")
        if start is not None and metric.get("direction") and not (point["value"] < start if lower else point["value"] > start):
            report.error("E951", f"reference `{point['label']}` {point['value']:g} does not beat the baseline "
                         f"{start:g}, and metric `{metric.get('name')}` is {word} is better", span,
                         hint="a reference is a better score than the starting point; check the number's sign, "
                              "scale and the metric's direction")
    thresholds = refs["thresholds"]
    if thresholds is not None:
        values = thresholds["values"]
        ranked = [name for name in MEDALS if name in values]
        for better, worse in zip(ranked, ranked[1:]):
            (high, _), (low, span) = values[better], values[worse]
            if metric.get("direction") and (low < high if lower else low > high):
                report.error("E952", f"threshold `{worse}` {low:g} is better than `{better}` {high:g}, "
                             f"and metric `{metric.get('name')}` is {word} is better", span,
                             hint="from gold down, each threshold is a worse score than the one before")
        refs["thresholds"] = {**{name: value for name, (value, _) in values.items()}, "source": thresholds["source"]}
