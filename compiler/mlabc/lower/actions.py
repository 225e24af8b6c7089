"""actions declaration → list of action IR entries, checked against spec/primitives.json."""
from __future__ import annotations

import copy
import json
import re

from .. import ast as A
from ..resources import spec_json
from ..names import closest, snake_case
from ..values import Reporter, did_you_mean, duplicate_entries
from .extends import ExtendsResolver

TIERS = ("main", "fast", "edit")
# What providers accept as a function name (OpenAI, Anthropic; some also want no digit first).
TOOL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


def tool_entry(action: dict) -> dict:
    """The provider tool of an action: its tool name, its description with the returns text, its input schema."""
    description = action["description"].strip()
    if action["returns"].strip():
        description = f"{description}\n\nReturns: {action['returns'].strip()}".strip()
    return {"type": "function", "function": {"name": action["tool_name"], "description": description,
                                             "parameters": input_schema(action["inputs"])}}


JSON_TYPES = {"string": "string", "text": "string", "path": "string", "int": "integer",
              "float": "number", "bool": "boolean"}


def param_value(value: A.Value, expected: str, report: Reporter, where: str):
    readers = {"int": lambda v, w: report.integer(v, w, minimum=None), "float": report.number,
               "string": report.string, "path": report.string, "text": report.string}
    if expected == "bool":
        if isinstance(value, A.Name) and value.value in ("true", "false"):
            return value.value == "true"
        report.error("E401", f"{where} takes true or false", value.span)
        return None
    return readers[expected](value, where)


def usage_text(inputs: list[dict]) -> str:
    """The input template shown to the model: a JSON object with each field described."""
    if not inputs:
        return "{}"
    lines = ["{"]
    for i, item in enumerate(inputs):
        comma = "," if i < len(inputs) - 1 else ""
        lines.append(f"    {json.dumps(item['name'])}: [{item['description']}]{comma}")
    lines.append("}")
    return "\n".join(lines)


def input_schema(inputs: list[dict]) -> dict:
    return {
        "type": "object",
        "properties": {i["name"]: {"type": JSON_TYPES[i["type"]], "description": i["description"]}
                       for i in inputs},
        "required": [i["name"] for i in inputs if i["required"]],
        "additionalProperties": False,
    }


def lower_action(action: A.Action, report: Reporter) -> dict | None:
    name = report.string(action.name, "`action`")
    if name is None:
        return None
    if not name.strip() or "\n" in name:
        report.error("E405", "an action name must be one non-empty line", action.name.span)
    duplicate_entries(action.entries, report, f"action {name!r}")
    primitives = spec_json("primitives.json")["primitives"]
    ir: dict = {"name": name, "description": "", "inputs": [], "returns": "", "primitive": None,
                "params": {}, "tier": None, "prompts": [], "tool_name": snake_case(name),
                "_tool_span": action.name.span, "_tool_declared": False}
    declared: dict[str, A.Input] = {}
    does = tier = None
    for entry in action.entries:
        if isinstance(entry, A.Describe):
            ir["description"] = report.string(entry.value, "`describe`") or ""
        elif isinstance(entry, A.Returns):
            ir["returns"] = report.string(entry.value, "`returns`") or ""
        elif isinstance(entry, A.Input):
            _input(entry, ir, declared, report)
        elif isinstance(entry, A.Does):
            does = entry
        elif isinstance(entry, A.Tier):
            tier = entry
        elif isinstance(entry, A.Tool):
            _tool(entry, ir, report)
    if does is None:
        report.error("E308", f"action {name!r} has no `does`", action.name.span,
                     hint="bind it to a runtime primitive, e.g. `does list_files`")
        return ir
    prim_name = does.primitive.value
    spec = primitives.get(prim_name)
    if spec is None:
        report.error("E402", f"unknown primitive `{prim_name}`", does.primitive.span,
                     did_you_mean(prim_name, primitives, "primitives"))
        return ir
    ir["primitive"] = prim_name
    ir["prompts"] = list(spec.get("prompts", []))
    ir["params"] = {key: p["default"] for key, p in spec["params"].items()}
    conflicting, unknown = _does_arguments(name, does, spec, declared, ir, report)
    given = {p.name.value for p in does.params}
    required = {k: t for k, t in spec["inputs"].items() if k not in given}
    # after a misspelt argument the author's intent is unknown: say only what is certain
    _check_contract(name, required, {k: v for k, v in declared.items() if k not in conflicting}, does, report,
                    report_missing=not unknown)
    _model_tier(name, prim_name, spec, does, tier, ir, report)
    return ir


def _does_arguments(name: str, does: A.Does, spec: dict, declared: dict[str, A.Input], ir: dict,
                    report: Reporter) -> tuple[set[str], bool]:
    """The arguments of `does` into the IR: parameters, and inputs of the primitive bound to
    constants (`bound`); the inputs both bound and declared (reported), and whether an argument
    was unknown."""
    prim_name = does.primitive.value
    bound: dict = {}
    conflicting: set[str] = set()  # bound and declared: reported once, not again by the contract
    unknown = False
    for param in does.params:
        key = param.name.value
        if key in spec["inputs"] and key not in spec["params"]:
            # an input of the primitive bound to a constant: the agent gives no such input
            value = param_value(param.value, spec["inputs"][key], report, f"bound input `{key}`")
            if key in declared:
                report.error("E406", f"input `{key}` is bound by `does`, so action {name!r} must not declare it",
                             declared[key].name.span, hint=f"remove `input {key}` or the binding in `does`")
                conflicting.add(key)
            elif value is not None:
                bound[key] = value
            continue
        if key not in spec["params"]:
            report.error("E403", f"primitive `{prim_name}` has no parameter or input `{key}`", param.name.span,
                         _arguments_hint(key, spec))
            unknown = True
            continue
        value = param_value(param.value, spec["params"][key]["type"], report, f"parameter `{key}`")
        if value is not None:
            ir["params"][key] = value
    if bound:
        ir["bound"] = bound
    return conflicting, unknown


def _model_tier(name: str, prim_name: str, spec: dict, does: A.Does, tier: A.Tier | None, ir: dict,
                report: Reporter) -> None:
    """An action of a primitive that calls a model names its tier (E407), and only such an action."""
    if spec.get("model"):
        if tier is None:
            report.error("E407", f"primitive `{prim_name}` calls a model: action {name!r} needs `model main|fast|edit`",
                         does.span)
        else:
            ir["tier"] = report.choice(tier.name, TIERS, "a model tier")
    elif tier is not None:
        report.error("E407", f"primitive `{prim_name}` calls no model, so the action takes no `model`", tier.span)


def _tool(entry: A.Tool, ir: dict, report: Reporter) -> None:
    tool_name = report.string(entry.value, "`tool`")
    if tool_name is None:
        return
    ir.update(tool_name=tool_name, _tool_span=entry.value.span, _tool_declared=True)
    if not TOOL_NAME.match(tool_name):
        report.error("E707", f"{tool_name!r} cannot be a tool name: providers refuse it", entry.value.span,
                     hint="a letter or `_` first, then up to 63 letters, digits, `_` or `-`")


def _input(entry: A.Input, ir: dict, declared: dict, report: Reporter) -> None:
    key = entry.name.value
    if key in declared:
        report.error("E302", f"input `{key}` is declared twice", entry.name.span)
        return
    declared[key] = entry
    type_ = report.choice(entry.type, JSON_TYPES, "an input type")
    description = report.string(entry.description, f"the description of input `{key}`") or ""
    item = {"name": key, "type": type_ or "string", "description": description, "required": entry.default is None}
    if entry.default is not None and type_ is not None:
        item["default"] = param_value(entry.default, type_, report, f"the default of `{key}`")
    ir["inputs"].append(item)


def _arguments_hint(key: str, spec: dict) -> str:
    """What `does prim(...)` accepts: the primitive's parameters and the inputs it can bind."""
    parts = [f"{what}: {', '.join(sorted(names))}" for what, names in
             (("parameters", spec["params"]), ("inputs", spec["inputs"])) if names]
    listing = "; ".join(parts) or "it takes no parameters or inputs"
    guess = closest(key, [*spec["params"], *spec["inputs"]])
    return f"did you mean `{guess}`? ({listing})" if guess else listing


def _check_contract(name: str, required: dict, declared: dict, does: A.Does, report: Reporter,
                    report_missing: bool = True) -> None:
    for key, type_ in required.items():
        if key not in declared:
            if not report_missing:
                continue
            report.error("E406", f"action {name!r} lacks input `{key}: {type_}` that `{does.primitive.value}` needs",
                         does.primitive.span)
        elif declared[key].type.value != type_:
            report.error("E406", f"input `{key}` must be of type `{type_}` for `{does.primitive.value}`",
                         declared[key].type.span)
    for key, entry in declared.items():
        if key not in required:
            report.error("E406", f"`{does.primitive.value}` takes no input `{key}`", entry.name.span,
                         hint="its inputs: " + ", ".join(f"{k}: {t}" for k, t in required.items()) if required
                         else "it takes no inputs the agent gives")


def lower_actions(decl: A.Actions, report: Reporter) -> list[dict]:
    """The actions a set declares itself, in order (no inheritance; see ActionSetResolver)."""
    out, names = [], {}
    for action in decl.entries:
        if not isinstance(action, A.Action):
            continue
        ir = lower_action(action, report)
        if ir is None:
            continue
        if ir["name"] in names:
            report.error("E301", f"action {ir['name']!r} is declared twice in `{decl.name.value}`", action.name.span,
                         hint=f"the first is on line {names[ir['name']]}")
            continue
        names[ir["name"]] = action.span.line
        out.append(ir)
    return out


class ActionSetResolver(ExtendsResolver):
    """Action sets with `extends` applied (lower/extends.py): the parent's actions in order, less those
    dropped, each redefined one replaced where it stood, then the set's new actions in order."""

    kind, plural, unknown_code = "action set", "action sets", "E303"

    def __init__(self, sets: dict[str, A.Actions], report: Reporter):
        super().__init__(sets, report)

    def all(self) -> dict[str, list[dict]]:
        """Every set that resolves, by name (a set whose parent is broken is left out, reported once)."""
        out = {name: self.resolve(name) for name in self.decls}
        return {name: actions for name, actions in out.items() if actions is not None}

    def empty(self) -> list[dict]:
        return []

    def inherit(self, decl: A.Actions, parent_result: list[dict]) -> list[dict]:
        return copy.deepcopy(parent_result)

    def broken(self, decl: A.Actions) -> None:
        lower_actions(decl, self.report)  # its own actions are still checked
        return None

    def apply(self, decl: A.Actions, base: list[dict]) -> list[dict]:
        return self._apply(decl, base, lower_actions(decl, self.report))

    def _apply(self, decl: A.Actions, inherited: list[dict], own: list[dict]) -> list[dict]:
        names = [a["name"] for a in inherited]
        for entry in decl.entries:
            if not isinstance(entry, A.DropAction):
                continue
            dropped = self.report.string(entry.name, "`drop action`")
            if dropped is None:
                continue
            if decl.parent is None:
                self.report.error("E306", f"action set `{decl.name.value}` extends no set, so it has no action "
                                  f"{dropped!r} to drop", entry.name.span,
                                  hint="`drop action` removes an inherited action: add `extends SET`")
            elif dropped not in names:
                self.report.error("E306", f"`drop action` names {dropped!r}, which is not an action of "
                                  f"`{decl.parent.value}`", entry.name.span, did_you_mean(dropped, names, "actions"))
            else:
                inherited = [a for a in inherited if a["name"] != dropped]
                names.remove(dropped)
        position = {a["name"]: i for i, a in enumerate(inherited)}
        for action in own:
            if action["name"] in position:
                inherited[position[action["name"]]] = action
            else:
                inherited.append(action)
        return inherited
