"""The JSON Schema of the YAML form (spec/yaml-form.schema.json), made from the compiler's tables.

Editors use it to validate and complete .mlab.yaml files; `mlabc schema yaml-form` prints it.
The file in spec/ is written by `python -m mlabc.yaml.schema`, and a test checks that it is
what this module makes, so the schema, the reader (yaml_decls) and the catalogues agree.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..lower.actions import JSON_TYPES, TIERS, TOOL_NAME
from ..lower.agent import FORMATS, KINDS, MODEL_PARAMS, ROLES, TOOLS_SETTINGS
from ..lower.search import COMMON, POLICIES, SELECT
from ..lower.task import CATEGORIES, LIMIT_KINDS, REQUIRED, SOURCE_KINDS, SPLITS, VARIANTS
from ..resources import data_dir, spec_json
from ..units import DURATION_PATTERN, SIZE_PATTERN

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*$"


def _ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def _object(properties: dict, required=(), description: str | None = None) -> dict:
    out: dict = {"type": "object", "additionalProperties": False, "properties": properties}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


def _by_name(value: dict, description: str) -> dict:
    return {"type": "object", "description": description, "propertyNames": _ref("name"),
            "additionalProperties": value}


def _yaml_scalar(word: str):
    """A setting value as YAML writes it: true and false are booleans there."""
    return {"true": True, "false": False}.get(word, word)


def _search_param(param) -> dict:
    kinds = {"count": {"type": "integer", "minimum": 1},
             "probability": {"anyOf": [{"type": "number", "minimum": 0, "maximum": 1}, _ref("percent")]},
             "positive": {"type": "number", "exclusiveMinimum": 0}, "non-negative": {"type": "number", "minimum": 0}}
    return {**kinds[param.type], "default": param.default, "description": param.meaning}


def _described(schema: dict, description: str) -> dict:
    return {**schema, "description": description}


def _value_defs() -> dict:
    """The shared value types: names, durations, sizes, percentages, lists, text, run limits."""
    limit_types = {"int": {"type": "integer", "minimum": 1}, "duration": _ref("duration"),
                   "size": _ref("size"), "number": {"type": "number"}}
    return {
        "name": {"type": "string", "pattern": NAME_PATTERN, "description": "letters, digits, _ and -"},
        "duration": {"type": "string", "pattern": f"^{DURATION_PATTERN}$", "description": "e.g. 30m, 5h"},
        "size": {"type": "string", "pattern": f"^{SIZE_PATTERN}$",
                 "description": "e.g. 512MiB, 8GiB"},
        "percent": {"type": "string", "pattern": r"^-?\d+(\.\d+)?%$", "description": "e.g. 10%"},
        "strings": {"type": "array", "items": {"type": "string"}},
        "names": {"type": "array", "items": {"anyOf": [_ref("name"), {"type": "string"}]}},
        "text": {"type": "string"},
        "scalar": {"type": ["string", "number", "boolean"]},
        "limits": _object({key: limit_types[kind] for key, kind in LIMIT_KINDS.items()},
                          description="run limits; durations such as 30m, sizes such as 8GiB"),
    }


def _column_rules() -> dict:
    """`column:` of a submission: each constrained column's kind, or a mapping of its words."""
    kinds = {"enum": ["ranking", "label", "integer", "number", "probability"]}
    bound = {"type": "number"}
    rule = _object({"kind": kinds, "max": {"type": "integer"}, "exactly": {"type": "integer"},
                    "from": {"anyOf": [{"type": "string"}, bound, _ref("strings")]}, "to": bound},
                   required=("kind",))
    return {"type": "object", "description": "column constraints by column (docs/language.md#column-constraints)",
            "additionalProperties": {"anyOf": [kinds, rule]}}


def _task_def(metrics: list[str]) -> dict:
    return _object({
        "title": _described(_ref("text"), "what to predict, in one line"),
        "category": {"enum": list(CATEGORIES)},
        "problem": _described(_ref("text"), "the research problem, as the agent reads it"),
        "starter": _described(_ref("text"), "folder copied into each run's workspace"),
        "read_only": _described(_ref("strings"), "workspace patterns the agent cannot change"),
        "requires": _described(_ref("strings"), "Python packages the task needs"),
        "data": {"type": "object", "description": "data variants by name",
                 "propertyNames": {"enum": list(VARIANTS)}, "additionalProperties": _ref("data")},
        "submission": {"anyOf": [{"type": "string"},
                                 _object({"file": {"type": "string"}, "columns": _ref("strings"),
                                          "column": _column_rules()},
                                         required=("file",))]},
        "metric": {"anyOf": [{"enum": metrics}, _object({
            "name": {"enum": metrics},
            "params": {"type": "object", "additionalProperties": _ref("scalar"),
                       "description": "the metric's parameters (mlabc schema metrics), e.g. {average: macro}"},
            "on": {"anyOf": [{"type": "string"}, _ref("strings")]},
            "direction": {"enum": ["lower_is_better", "higher_is_better"]}}, required=("name",))]},
        "baseline": {"anyOf": [_object({"run": {"type": "string"}}, required=("run",)),
                               _object({"value": {"type": "number"}, "because": {"type": "string"}},
                                       required=("value", "because"))]},
        "success": _object({"improvement": _ref("percent")}, required=("improvement",)),
        "agent": _ref("name"),
        "limits": _ref("limits"),
        "hardware": _object({key: {"anyOf": [schema, _object(
            {"value": schema, "need": {"enum": ["required", "optional"]}}, required=("value",))]}
            for key, schema in (("cpus", {"type": "integer", "minimum": 1}),
                                ("gpus", {"type": "integer", "minimum": 0}), ("memory", _ref("size")))}),
        "demo": _described({"type": "string"}, "JSON list of the replies the demo model plays"),
        "evaluator": _object({"function": {"type": "string", "description": "file.py:function"},
                              "because": {"type": "string"}}, required=("function", "because")),
        "version": _described({"type": "integer", "minimum": 1}, "the task's version (default 1)"),
        "changes": {"type": "array", "items": _object({"version": {"type": "integer", "minimum": 2},
                                                       "what": {"type": "string"}, "because": {"type": "string"}},
                                                      required=("version", "what", "because"))},
        "issue": {"type": "array", "items": _object({"text": {"type": "string"},
                                                     "since": {"type": "integer", "minimum": 1},
                                                     "fixed": {"type": "integer", "minimum": 2}},
                                                    required=("text", "since"))},
        "reference": {"type": "object", "additionalProperties": _object(
            {"value": {"type": "number"}, "source": {"type": "string"}}, required=("value",)),
            "description": "reference scores by label, each with its source (docs/reports.md)"},
        "thresholds": _object({**{medal: {"type": "number"} for medal in ("gold", "silver", "bronze", "median")},
                               "source": {"type": "string"}}, description="MLE-bench's medal thresholds"),
        "leaderboard": _object({"file": {"type": "string"}, "column": {"type": "string"}, "source": {"type": "string"}},
                               required=("file",), description="a public leaderboard's scores: a CSV file shipped with "
                               "the task, its score column (`score` when not given) and its source (docs/reports.md)"),
        "gym": _object({"shaping": {"enum": ["validation"]},
                        "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}},
                       description="how mlab.gym shapes an episode's reward (docs/external.md#reward-shaping)"),
    }, required=REQUIRED)


def _data_def() -> dict:
    return _object({
        "from": {"type": "object", "minProperties": 1, "maxProperties": 1,
                 "propertyNames": {"enum": list(SOURCE_KINDS)}, "additionalProperties": {"type": "string"},
                 "description": "one key: the kind of source, e.g. {csv: task/lite/data.csv}"},
        "split": {"anyOf": [{"enum": list(SPLITS)}, _object({
            "method": {"enum": list(SPLITS)}, "column": {"type": "string"},
            "fraction": {"anyOf": [{"type": "number"}, _ref("percent")]},
            "seed": {"type": "integer"},
            "last": {"type": "string", "description": "a time split's horizon, e.g. 30 days"}}, required=("method",))]},
        "id": {"type": "string"}, "answers": {"anyOf": [_ref("strings"), _object(
            {"columns": _ref("strings"), "unlabelled": {"type": "boolean"}}, required=["columns"])],
            "description": "the answer columns; `unlabelled: true` lets training rows leave them blank"}, "public": _ref("strings"),
        "private": _ref("strings"),
        "checksum": {"type": "object", "description": "file → SHA-256 digest",
                     "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
        "prepare": {"type": "string",
                    "description": "file.py:function that turns a downloaded or folder source into the files"},
        "validation": {"anyOf": [{"type": "number"}, _ref("percent")],
                       "description": "the share of the training rows held out as a validation split"},
        "limits": _ref("limits"),
    }, required=("from", "public"))


def _action_def(primitives: dict) -> dict:
    return _object({
        "describe": {"type": "string"},
        "input": _by_name(_object({"type": {"enum": list(JSON_TYPES)}, "default": _ref("scalar"),
                                   "describe": {"type": "string"}}, required=("type", "describe")),
                          "the action's inputs by name"),
        "returns": {"type": "string"},
        "does": {"anyOf": [{"enum": sorted(primitives["primitives"])}, {
            "type": "object", "minProperties": 1, "maxProperties": 1,
            "propertyNames": {"enum": sorted(primitives["primitives"])},
            "additionalProperties": {"type": ["object", "null"], "additionalProperties": _ref("scalar")}}]},
        "model": {"enum": list(TIERS)},
        "tool": {"type": "string", "pattern": TOOL_NAME.pattern,
                 "description": "the provider tool name (default: the action name in snake case)"},
    }, required=("does",))


def _section_def() -> dict:
    return {"anyOf": [{"type": "string"}, _object({
        "role": {"enum": list(ROLES)}, "kind": {"enum": list(KINDS)}, "instruction": {"type": "string"}},
        required=("instruction",))]}


def _search_def() -> dict:
    """A tree-search block: one policy, with its parameters and those every policy shares."""
    return {"type": "object", "minProperties": 1, "maxProperties": 1,
            "description": "a tree-search policy instead of the linear loop",
            "properties": {policy: {"anyOf": [{"type": "null"}, _object({
                **{key: _search_param(param) for key, param in table.items()},
                "parallel": {"type": "integer", "minimum": 1, "description": COMMON["parallel"][0]},
                "code_file": {"type": "string", "pattern": r"\.py$", "description": COMMON["code_file"][0]},
                "score": {"type": "string", "description": COMMON["score"][0]},
                "select": {"enum": list(SELECT), "description": COMMON["select"][0]}})]}
                for policy, table in POLICIES.items()},
            "additionalProperties": False}


def _agent_def(primitives: dict) -> dict:
    return _object({
        "extends": _ref("name"), "actions": _ref("name"),
        "show": _ref("strings"), "hide": _ref("strings"),
        "model": {"type": "object", "propertyNames": {"enum": list(TIERS)}, "additionalProperties": {
            "anyOf": [{"type": "string"}, _object(
                {"default": {"type": "string"},
                 **{key: {"list": _ref("strings"), "int": {"type": "integer", "minimum": 1}}.get(
                     kind, {"type": "number"}) for key, kind in MODEL_PARAMS.items()}},
                required=("default",))]}},
        "history": {"type": "integer", "minimum": 0}, "summarize": {"type": "integer", "minimum": 1},
        "retries": {"type": "integer", "minimum": 0},
        "prompt": _ref("text"), "format_error": _ref("text"),
        "respond": {"type": "object", "minProperties": 1, "maxProperties": 1,
                    "propertyNames": {"enum": list(FORMATS)},
                    "properties": {"tools": _object({
                        "sections": {"type": "object", "additionalProperties": _ref("section"),
                                     "description": "the text sections, by name (and the fallback's action "
                                                    "and action-input sections, if declared)"},
                        **{key: {"enum": [_yaml_scalar(a) for a in allowed]}
                           for key, allowed in TOOLS_SETTINGS.items()}})},
                    "additionalProperties": {"type": "object", "additionalProperties": _ref("section")}},
        "search": _search_def(),
        "drop": {"anyOf": [{"type": "string"}, _ref("strings")]},
        "prompts": {"type": "object", "propertyNames": _ref("name"), "additionalProperties": _ref("text")},
        **{time: {"anyOf": [{"enum": sorted(h for h, spec in primitives["hooks"].items() if spec["when"] == time)},
                            {"type": "array", "items": _ref("name")}]}
           for time in ("before_step", "after_step")},
        # an agent from outside mlab (`agent NAME external { ... }`)
        "external": {"const": True, "description": "an agent from outside mlab: a command run in the sandbox "
                                                   "(it takes command, requires, no_deps, dialect, env, model, "
                                                   "submits, limits)"},
        "command": _ref("text"), "no_deps": _ref("strings"),
        "requires": {"type": "array", "items": {"anyOf": [
            {"type": "string"},
            {"type": "object", "additionalProperties": False, "required": ["npm"],
             "properties": {"npm": {"type": "string", "description": "an npm package at an exact version"}}},
            {"type": "object", "additionalProperties": False, "required": ["python"],
             "properties": {"python": {"type": "string", "description": "the Python the agent's environment is "
                                                                        "made with: X.Y or X.Y.Z"}}}]},
            "description": "PyPI requirements (PEP 508), npm packages ({npm: \"NAME@VERSION\"}) and the Python "
                           "they install into ({python: \"3.12\"})"},
        "dialect": {"enum": ["chat", "responses", "anthropic", "gemini"],
                    "description": "the wire protocol the agent's model client speaks to the gateway"},
        "env": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "additionalProperties": {"type": "string"}},
        "submits": {"type": "string"}, "limits": _ref("limits"),
    })


def _experiment_defs() -> dict:
    """An experiment, its per-task overrides and its model lists."""
    return {
        "models": {"anyOf": [_ref("strings"), {"type": "object", "propertyNames": {"enum": list(TIERS)},
                                                "additionalProperties": _ref("strings")}]},
        "override": _object({"data": {"enum": list(VARIANTS)}, "limits": _ref("limits"), "agents": _ref("names"),
                             "models": _ref("models"), "runs": {"type": "integer", "minimum": 1}}),
        "experiment": _object({
            "tasks": {"anyOf": [{"const": "all"}, _ref("names"),
                                _object({"category": {"enum": list(CATEGORIES)}}, required=("category",))]},
            "agents": _ref("names"), "models": _ref("models"), "runs": {"type": "integer", "minimum": 1},
            "data": {"enum": list(VARIANTS)}, "limits": _ref("limits"), "retries": {"type": "integer", "minimum": 0},
            "override": _by_name(_ref("override"), "settings for single tasks, by task name"),
            "override_agent": _by_name(_object({"limits": _ref("limits")}), "limits for single agents, by agent name"),
        }, required=("agents",)),
    }


def _defs() -> dict:
    metrics = sorted(spec_json("metrics.json")["metrics"])
    primitives = spec_json("primitives.json")
    return {**_value_defs(), "task": _task_def(metrics), "data": _data_def(), "action": _action_def(primitives),
            "section": _section_def(), "agent": _agent_def(primitives), **_experiment_defs()}


def yaml_form_schema() -> dict:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://mlab.dev/spec/yaml-form.schema.json",
        "version": 1,
        "title": "The YAML form of .mlab files (x.mlab.yaml): tasks, action sets, agents, experiments",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "use": {"type": "array", "description": "files to import: a path, or {std: NAME} (with version: N to pin a release)", "items": {
                "anyOf": [{"type": "string"}, _object({"std": {"type": "string"}, "version": {"type": "integer"}},
                                                   required=("std",))]}},
            "tasks": _by_name(_ref("task"), "tasks by name"),
            "actions": _by_name({"type": "object", "additionalProperties": _ref("action"),
                                 "properties": {"extends": _ref("name"),
                                                "drop": {"anyOf": [{"type": "string"}, _ref("strings")]}},
                                 "description": "actions by their name as the agent sees it; `extends` names "
                                                "the set it inherits from, `drop` the inherited actions it removes"},
                                "action sets by name"),
            "agents": _by_name(_ref("agent"), "agents by name"),
            "experiments": _by_name(_ref("experiment"), "experiments by name"),
        },
        "$defs": _defs(),
    }


def schema_text() -> str:
    return json.dumps(yaml_form_schema(), indent=2, ensure_ascii=False) + "\n"


def schema_path() -> Path:
    return data_dir("spec") / "yaml-form.schema.json"


if __name__ == "__main__":
    schema_path().write_text(schema_text(), encoding="utf-8")
    print(f"wrote {schema_path()}")
