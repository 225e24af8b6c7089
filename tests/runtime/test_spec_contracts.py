"""The runtime keeps in step with spec/: primitives, template context, trace and run schemas."""
from __future__ import annotations

import inspect
import json

import jinja2
import pytest

from mlab.agent import context
from mlab.actions import primitives
from mlab.agent import model_actions

from runtime_helpers import REPO

SPEC = REPO / "spec"
PRIMITIVES = json.loads((SPEC / "primitives.json").read_text())["primitives"]
TEMPLATES = json.loads((SPEC / "template-context.json").read_text())["templates"]
TOOLS_TEMPLATES = {name: keys for name, keys in
                   json.loads((SPEC / "template-context.json").read_text())["tools_agent_templates"].items()
                   if name != "description"}


def agent_registry() -> primitives.PrimitiveRegistry:
    """The registry an agent's table runs with: the base primitives, the model-backed ones installed."""
    registry = primitives.base_registry()
    model_actions.install(registry)
    return registry


def test_the_registry_has_exactly_the_primitives_of_the_spec():
    assert sorted(primitives.base_registry()) == sorted(agent_registry()) == sorted(PRIMITIVES)


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_each_primitive_has_the_inputs_params_and_model_flag_of_the_spec(name):
    for registry in (primitives.base_registry(), agent_registry()):
        registered, spec = registry[name], PRIMITIVES[name]
        assert registered.inputs == spec["inputs"]
        assert registered.params == {param: entry["default"] for param, entry in spec["params"].items()}
        assert registered.model == bool(spec.get("model"))


def test_the_agent_implements_every_model_backed_primitive_of_the_spec():
    base, installed = primitives.base_registry(), agent_registry()
    model_backed = sorted(name for name, spec in PRIMITIVES.items() if spec.get("model"))
    assert sorted(name for name in installed if installed[name].run is not base[name].run) == model_backed
    assert sorted(model_actions.IMPLEMENTATIONS) == model_backed


def test_installing_the_model_actions_changes_only_the_registry_given():
    installed, other = agent_registry(), primitives.base_registry()
    assert installed["reflection"].run is model_actions.reflection
    assert other["reflection"].run is not model_actions.reflection


def test_there_is_one_context_builder_per_template_of_the_spec():
    assert sorted(context.BUILDERS) == sorted(TEMPLATES)


SAMPLE = {"str": "text", "int": 3, "list": ["a", "b"]}


def sample_arguments(builder, task) -> dict:
    values = {}
    for name, parameter in inspect.signature(builder).parameters.items():
        annotation = str(parameter.annotation)
        if name == "task":
            values[name] = task
        elif name == "actions":
            values[name] = [{"name": "List Files", "description": "d", "usage": "{}", "returns": "r"}]
        elif name == "sections":
            values[name] = [{"name": "Thought", "kind": "text", "role": "thought", "instruction": "i"}]
        elif name == "steps":
            values[name] = [{"step": 1, "action": "List Files", "action_input": {"dir_path": "."},
                             "observation": "o", "model": {"reply": {"Thought": "t"}}}]
        elif "list" in annotation:
            values[name] = SAMPLE["list"]
        elif "int" in annotation:
            values[name] = SAMPLE["int"]
        else:
            values[name] = SAMPLE["str"]
    return values


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_each_builder_returns_exactly_the_declared_keys(template, house_task):
    builder = context.BUILDERS[template]
    built = builder(**sample_arguments(builder, house_task))
    assert sorted(built) == sorted(TEMPLATES[template])


def test_there_is_one_tool_agent_builder_per_tool_agent_template_of_the_spec():
    assert sorted(context.TOOLS_BUILDERS) == sorted(TOOLS_TEMPLATES)


@pytest.mark.parametrize("template", sorted(TOOLS_TEMPLATES))
def test_each_tool_agent_builder_returns_exactly_the_declared_keys(template, house_task):
    builder = context.TOOLS_BUILDERS[template]
    built = builder(**sample_arguments(builder, house_task))
    assert sorted(built) == sorted(TOOLS_TEMPLATES[template])


def test_the_task_object_has_the_declared_fields(house_task):
    view = context.task_view(house_task)
    assert sorted(view) == ["direction", "metric", "name", "problem", "submission_columns", "submission_file",
                            "title"]
    assert view["submission_file"] == "submission.csv" and view["direction"] == "lower_is_better"


def test_every_template_of_every_agent_renders_with_the_built_context(house_task):
    build = house_task.build
    for agent_name in build.agent_names:
        agent = build.agent(agent_name)
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        if agent.doc.get("search"):
            continue  # a tree-search agent's operator templates are rendered by mlab.search
        builders = dict(context.BUILDERS, **context.TOOLS_BUILDERS) if agent.doc["reply"] and \
            agent.doc["reply"]["format"] == "tools" else context.BUILDERS
        for template, text in agent.templates.items():
            builder = builders[template]
            rendered = env.from_string(text).render(**builder(**sample_arguments(builder, house_task)))
            assert isinstance(rendered, str), (agent_name, template)


def test_history_steps_come_from_trace_records(new_run):
    run = new_run()
    run.step("List Files", {"dir_path": "."}, model={"reply": {"Thought": "look around"}})
    steps = context.history_context(steps=run.records)["steps"]
    assert steps == [{"number": 1, "reply": {"Thought": "look around"}, "action": "List Files",
                      "action_input": '{"dir_path": "."}', "observation": run.records[0]["observation"]}]


def test_the_failure_modes_are_exactly_those_of_the_result_schema():
    from mlab.failure import FailureMode

    schema = json.loads((SPEC / "result.schema.json").read_text())["properties"]["failure_mode"]
    declared = [value for branch in schema["oneOf"] for value in branch.get("enum", [])]
    assert sorted(mode.value for mode in FailureMode) == sorted(declared)
