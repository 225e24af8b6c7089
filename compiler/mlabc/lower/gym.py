"""A task's `gym { ... }` block → `gym` in its IR: how mlab.gym shapes an episode's reward.

    gym { shaping validation  weight 0.1 }

`shaping validation` adds, at each step whose observation reports a validation score (Validate
Submission on a task with a validation split), `weight` times the improvement of the best
validation score so far, as a fraction of the first one. The declaration belongs to the task,
not to an action table or an agent: what can be shaped depends on the task's data (a validation
split) and its metric's direction, and any policy stepping the task gets the same reward.

Checks: an unknown shaping (E906), a weight that is not a number in (0, 1] (E907), validation
shaping on a task whose data variants do not all declare a validation split (E908), an entry
other than `shaping` and `weight`, or a weight without a shaping (E909), an entry given twice
(E302).
"""
from __future__ import annotations

from .. import ast as A
from ..values import Reporter, did_you_mean

SHAPINGS = ("validation",)
ENTRIES = ("shaping", "weight")
DEFAULT_WEIGHT = 1.0


def lower_gym(e: A.Gym, ir: dict, report: Reporter):
    """The block's IR into ir["gym"]; returns the span of its shaping (for check_gym), or None."""
    given: dict = {}
    for item in e.items:
        key = item.key.value
        if key not in ENTRIES:
            report.error("E909", f"unknown entry `{key}` in `gym`", item.key.span,
                         did_you_mean(key, ENTRIES, "gym entries"))
        elif key in given:
            report.error("E302", f"`{key}` is given twice in `gym`", item.key.span)
        else:
            given[key] = item
    out: dict = {}
    shaping = given.get("shaping")
    if shaping is not None:
        name = report.name_or_string(shaping.value, "`shaping`")
        if name is not None and name not in SHAPINGS:
            report.error("E906", f"unknown shaping `{name}`", shaping.value.span,
                         did_you_mean(name, SHAPINGS, "shapings"))
        elif name is not None:
            out["shaping"] = name
    weight = given.get("weight")
    if weight is not None and shaping is None:
        report.error("E909", "`weight` in `gym` scales a shaping, and the block declares none", weight.key.span,
                     hint="add `shaping validation`")
    elif weight is not None:
        value = report.number(weight.value, "`weight`")
        if value is not None and not 0 < value <= 1:
            report.error("E907", f"the shaping weight must be above 0 and at most 1, not {value:g}",
                         weight.value.span, hint="the final reward is the improvement over the baseline (1.0 is "
                         "a 100% improvement); a weight of 0.1 keeps the shaping small beside it")
        elif value is not None and "shaping" in out:
            out["weight"] = float(value)
    if "shaping" in out:
        out.setdefault("weight", DEFAULT_WEIGHT)
        ir["gym"] = out
        return shaping.value.span
    return None


def check_gym(ir: dict, span, report: Reporter) -> None:
    """Validation shaping needs a validation split in every data variant of the task."""
    gym = ir.get("gym")
    if not gym or gym["shaping"] != "validation" or not ir["data"]:
        return
    missing = sorted(name for name, variant in ir["data"].items() if variant.get("validation") is None)
    if missing:
        which = ", ".join(f"`{name}`" for name in missing)
        report.error("E908", f"`shaping validation` needs a validation split, and data {which} declares none",
                     span, hint=f"add e.g. `validation 0.1` to data {which} (training rows held out and scored by "
                     "Validate Submission)")
