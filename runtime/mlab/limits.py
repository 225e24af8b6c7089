"""A run's limits: the task's, overridden by its data variant's, overridden by the command line's."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from mlabc.units import DURATION_UNITS, SIZE_UNITS

from mlab.errors import UsageError

LIMIT_NAMES = ("steps", "time", "script_timeout", "memory", "disk", "tokens", "cost", "calls")
DEFAULT_DISK_BYTES = 20 * 2**30   # the most a run's workspace may hold (see docs/security.md)
GRACE_STEPS = 1  # steps allowed after the first shutdown notice, for the final answer


@dataclass(frozen=True)
class Limits:
    """steps; time and script_timeout in seconds; memory and disk in bytes; tokens; cost in dollars;
    calls: model calls of every kind (steps, helper actions, summaries, hooks, tree operators)."""

    steps: int | None = 50
    time: float | None = 5 * 3600.0
    script_timeout: float | None = 1800.0
    memory: int | None = None
    disk: int | None = DEFAULT_DISK_BYTES
    tokens: int | None = None
    cost: float | None = None
    calls: int | None = None

    def to_json(self) -> dict:
        return asdict(self)


def resolve_limits(task_limits, variant_limits=None, overrides: dict | None = None) -> Limits:
    """Merge the three levels; a value of None at a level leaves the level below in place. The
    task's and the variant's are their documents' views (mlab.documents.Limits); the overrides a dict."""
    merged = Limits().to_json()
    for level in (_declared(task_limits), _declared(variant_limits), overrides or {}):
        for name, value in level.items():
            if name not in LIMIT_NAMES:
                raise UsageError(f"unknown limit {name!r}; limits are: {', '.join(LIMIT_NAMES)}")
            if value is not None:
                merged[name] = value
    for name in LIMIT_NAMES:
        value = merged[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise UsageError(f"limit {name} must be a positive number, not {value!r}")
    return Limits(**merged)


def _declared(level) -> dict:
    """A level of limits as a dict: a document's view (every limit, None where not declared) or a dict."""
    if level is None:
        return {}
    if isinstance(level, dict):
        return level
    return {name: getattr(level, name) for name in LIMIT_NAMES}


# The command line's units, built from the compiler's one table: a duration in h, m and s (or a
# bare number of seconds); a size in any unit, any case (or a bare number of bytes).
_DURATION_SCALE = {unit: float(DURATION_UNITS[unit]) for unit in ("h", "m", "s")}
_SIZE_SCALE = {"": 1, **{unit.lower(): factor for unit, factor in SIZE_UNITS.items()}}


def parse_duration(text: str) -> float:
    """'90', '90s', '30m', '5h', '1h30m' → seconds (a usage error otherwise)."""
    value = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([" + "".join(_DURATION_SCALE) + "])", value)
    if not parts or "".join(n + u for n, u in parts) != value.replace(" ", ""):
        raise UsageError(f"{text!r} is not a duration; write e.g. 90s, 30m, 5h or 1h30m")
    return sum(float(n) * _DURATION_SCALE[u] for n, u in parts)


def parse_size(text: str) -> int:
    """'8GiB', '512MiB', '2GB' or a number of bytes → bytes (a usage error otherwise)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_SCALE or float(match.group(1)) <= 0:
        raise UsageError(f"{text!r} is not a size; write e.g. 512MiB, 8GiB or a number of bytes")
    return int(float(match.group(1)) * _SIZE_SCALE[unit])


def limit_overrides(args) -> dict:
    """The limits given on a command line (`mlab run`, `mlab drive`): flags a verb lacks are unset."""
    given = {name: getattr(args, name, None) for name in LIMIT_NAMES}
    for name in ("steps", "tokens", "calls"):
        if given[name] is not None and given[name] < 1:
            raise UsageError(f"--{name} must be 1 or more")
    if given["cost"] is not None and not given["cost"] > 0:
        raise UsageError("--cost must be more than 0")
    overrides = {}
    for name, text in given.items():
        if text is None:
            continue
        if name in ("time", "script_timeout"):
            overrides[name] = parse_duration(text)
        elif name in ("memory", "disk"):
            overrides[name] = parse_size(text)
        else:
            overrides[name] = text
    return overrides


def shutdown_text(reason: str, limits: Limits, final: bool) -> str:
    """The observation an action gets once a limit is reached."""
    what = (f"its step limit ({limits.steps} steps)" if reason == "steps"
            else f"its time limit ({limits.time / 60:.0f} minutes)")
    if final:
        return (f"The run has reached {what} and has now ended without a final answer. "
                "The action was not carried out.")
    return (f"The run has reached {what}, so this action was not carried out. You have one step "
            "left: use the Final Answer action now to submit what you have (any other action ends "
            "the run without a final answer).")


WIND_DOWN_LABEL = "at limit"  # what a wind-down record is shown as, in place of a step number


def step_limit(meta: dict | None) -> int | None:
    """The step limit a run (its run.json) ran under, or None (no limit, or a run.json without one)."""
    steps = ((meta or {}).get("limits") or {}).get("steps")
    return steps if isinstance(steps, int) and not isinstance(steps, bool) else None


def is_wind_down(record: dict, steps: int | None) -> bool:
    """Whether a trace record is the wind-down after a limit rather than a step within it: an
    action refused with the shutdown notice, or any record past the step limit (the last-chance
    final answer, the record that closes the run). Shown without a step number past the limit."""
    number = record.get("step")
    past = (steps is not None and isinstance(number, int) and not isinstance(number, bool) and number > steps
            and not isinstance(record.get("node"), int))  # a tree run's limit counts nodes, not records
    return record.get("status") == "shutdown" or past


def step_label(record: dict, steps: int | None) -> str:
    """'step N' for a step within the limits, 'at limit' for wind-down work after one."""
    return WIND_DOWN_LABEL if is_wind_down(record, steps) else f"step {record.get('step')}"


def counted_steps(records: list[dict], steps: int | None) -> int:
    """The actions carried out within the limits (done, failed or the final answer), the count a
    result reports: a refused action and the wind-down after the step limit are not steps."""
    return sum(1 for r in records if r.get("status") in ("ok", "error", "final") and not is_wind_down(r, steps))
