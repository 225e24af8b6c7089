"""experiment declaration → experiment IR; references are resolved by check.py."""
from __future__ import annotations

from .. import ast as A
from .actions import TIERS
from .task import CATEGORIES, VARIANTS, lower_limits
from ..values import Reporter, duplicate_entries


def _settings(entries, ir: dict, report: Reporter, refs: list, where: str) -> None:
    for entry in entries:
        if isinstance(entry, A.ExpData):
            value = report.name_or_string(entry.value, "`data`")
            if value is not None and value not in VARIANTS:
                report.error("E405", f"data variant `{value}` is not allowed", entry.value.span,
                             hint="variants: " + ", ".join(VARIANTS))
            ir["data"] = value
        elif isinstance(entry, A.Limits):
            ir["limits"] = lower_limits(entry, report, f"{where} limits")
        elif isinstance(entry, A.ExpAgents):
            if isinstance(entry.value, A.List):
                ir["agents"] = report.string_list(entry.value, "agents", names_ok=True) or []
                refs.extend(("agent", item) for item in entry.value.items if isinstance(item, (A.Name, A.Str)))
            else:
                report.error("E401", "`agents` takes a list of agent names", entry.value.span)
        elif isinstance(entry, A.ExpModels):
            tier = report.choice(entry.tier, TIERS, "a model tier") if entry.tier else "main"
            models = report.string_list(entry.value, "models") or []
            if tier:
                ir["models"][tier] = models
        elif isinstance(entry, A.ExpRuns):
            ir["runs"] = report.integer(entry.value, "`runs`", minimum=1)


def _agent_limits(entry: A.ExpOverride, ir: dict, report: Reporter, refs: list) -> None:
    """`override agent NAME { limits {...} }`: the limits of that agent's runs, over the experiment's
    and a task override's (a tree search counts nodes where a linear agent counts steps)."""
    name = entry.name.value
    where = f"override agent `{name}`"
    duplicate_entries(entry.entries, report, where)
    if name in ir.setdefault("agent_overrides", {}):
        report.error("E302", f"agent `{name}` is overridden twice", entry.name.span)
        return
    limits: dict = {}
    for block in entry.entries:
        limits.update(lower_limits(block, report, f"{where} limits"))
    ir["agent_overrides"][name] = {"limits": limits}
    refs.append(("agent", A.Name(entry.name.span, name)))


def lower_experiment(decl: A.Experiment, report: Reporter) -> tuple[dict, list]:
    """The experiment IR and its references [(kind, value node)] to check."""
    where = f"experiment `{decl.name.value}`"
    duplicate_entries(decl.entries, report, where)
    ir: dict = {"name": decl.name.value, "tasks": {"all": True}, "agents": [], "models": {}, "runs": 1,
                "data": "lite", "limits": {}, "retries": 0, "overrides": {}}
    refs: list = []
    _settings(decl.entries, ir, report, refs, where)
    for entry in decl.entries:
        if isinstance(entry, A.ExpTasks):
            value = entry.value
            if isinstance(value, A.Name) and value.value == "all":
                ir["tasks"] = {"all": True}
            elif isinstance(value, A.List):
                ir["tasks"] = {"names": report.string_list(value, "tasks", names_ok=True) or []}
                refs.extend(("task", item) for item in value.items if isinstance(item, (A.Name, A.Str)))
            else:
                report.error("E401", "`tasks` takes `all`, a list of task names or `category NAME`", value.span)
        elif isinstance(entry, A.ExpTasksCategory):
            ir["tasks"] = {"category": report.choice(entry.name, CATEGORIES, "a category")}
        elif isinstance(entry, A.ExpRetries):
            ir["retries"] = report.integer(entry.value, "`retries`", minimum=0)
        elif isinstance(entry, A.ExpOverride) and entry.agent:
            _agent_limits(entry, ir, report, refs)
        elif isinstance(entry, A.ExpOverride):
            override: dict = {"models": {}}
            duplicate_entries(entry.entries, report, f"override `{entry.name.value}`")
            _settings(entry.entries, override, report, refs, f"override `{entry.name.value}`")
            if not override["models"]:
                del override["models"]
            ir["overrides"][entry.name.value] = override
            refs.append(("task", A.Name(entry.name.span, entry.name.value)))
    if not ir["agents"]:
        report.error("E308", f"{where} names no agents", decl.name.span, hint="add e.g. `agents [research]`")
    return ir, refs
