"""The runtime keeps in step with spec/: primitives, template context, trace and run schemas."""
from __future__ import annotations

import inspect
import json

import jinja2
import pytest

from mlab.agent import context
from mlab.actions import primitives
from mlab.documents.agent import Action, Section
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


def action(name: str, description: str, returns: str) -> Action:
    """An action of an action table, as actions.json declares one."""
    return Action.of({"name": name, "description": description, "usage": "{}", "returns": returns, "inputs": [],
                      "primitive": "list_files", "params": {}, "tier": "main", "prompts": [], "shown": True,
                      "input_schema": {"type": "object"}})


SAMPLE_ACTION = action("«action»", "«description»", "«returns»")


def sample_arguments(builder, task) -> dict:
    values = {}
    for name, parameter in inspect.signature(builder).parameters.items():
        annotation = str(parameter.annotation)
        if name == "task":
            values[name] = task
        elif name == "actions":
            values[name] = [action("List Files", "d", "r")]
        elif name == "sections":
            values[name] = [Section("Thought", "text", "thought", "i")]
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


PROBLEM = "<the task's problem>"  # stands for the task's problem text in MUST
# what each template must show of its variables (markers as sample_markers makes them), by agent kind
# ("linear": the sections and json formats); the reply formats are checked against each agent's sections
LINEAR_MUST = {
    "prompt": [PROBLEM, "«tools»", "«reply_format»", "«history»"],
    "tools": ["«action»", "«description»", "«returns»"],
    "history": ["«observation»", "«reply»"],
    "format_error": ["«error»", "«reply_format»"],
    "understand_file": ["«chunk»", "«things_to_look_for»", "«file_name»"],
    "understand_file_merge": ["«answers»", "«things_to_look_for»"],
    "edit_script": ["«content»", "«instruction»"],
    "edit_script_segment": ["«segment»", "«instruction»"],
    "summarize_observation": ["«observation»", "«action»"],
    "reflection": ["«things_to_reflect_on»", "«research_log»"],
    "retrieve_log": ["«current_plan»", "«research_log»"],
    "append_summary": ["«observation»", "«action»", "«reply»"],
    "reply_format": [],
}
MUST = {
    "sections": LINEAR_MUST, "json": LINEAR_MUST,
    "tools": {**LINEAR_MUST, "prompt": ["«tools»", "«reply_format»"], "problem": [PROBLEM], "turn": ["11", "23"],
              "fallback_reply_format": []},
    "search": {"draft": [PROBLEM, "«code_file»", "«journal»", "«data_preview»"],
               "improve": [PROBLEM, "«parent-code»", "«parent-output»", "«journal»"],
               "debug": [PROBLEM, "«parent-code»", "«parent-output»"],
               "crossover": [PROBLEM, "«p1-code»", "«p2-code»"],
               "review": ["«code»", "«output»"], "format_error": ["«error»", "«code_file»"]},
}
NUMBERS = {"step": 11, "max_steps": 23, "chunk_index": 2, "chunk_count": 5, "start_line": 31, "end_line": 37,
           "node": 4, "max_nodes": 9}


def sample_markers(builder, task, sections: tuple[Section, ...]) -> dict:
    """Arguments of a builder, each string a marker «name» that a rendering can be searched for."""
    from mlab.search.tree import Node

    values = {}
    for name, parameter in inspect.signature(builder).parameters.items():
        annotation = str(parameter.annotation)
        if name == "task":
            values[name] = task
        elif name == "actions":
            values[name] = [SAMPLE_ACTION]
        elif name == "sections":
            values[name] = sections
        elif name == "steps":
            values[name] = [{"step": 1, "action": "«step-action»", "action_input": {"dir_path": "."},
                             "observation": "«observation»", "model": {"reply": {"Thought": "«reply»"}}}]
        elif name == "parent":
            values[name] = Node(1, None, "draft", plan="«parent-plan»", code="«parent-code»",
                                output="«parent-output»", validation=0.5, buggy=False)
        elif name == "parents":
            values[name] = [Node(n, None, "draft", plan=f"«p{n}-plan»", code=f"«p{n}-code»", output=f"«p{n}-output»",
                                 validation=0.5, buggy=False) for n in (1, 2)]
        elif name in NUMBERS:
            values[name] = NUMBERS[name]
        elif "list" in annotation:
            values[name] = [f"«{name}»"]
        else:
            values[name] = f"«{name}»"
    return values


def agent_kind(agent) -> str:
    return "search" if agent.view.search else agent.view.reply.format


def test_every_template_of_every_agent_shows_what_it_must(house_task):
    from mlab.search import context as search_context

    build, env = house_task.build, jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    kinds = set()
    for agent_name in build.agent_names:
        agent = build.agent(agent_name)
        kind = agent_kind(agent)
        kinds.add(kind)
        builders = {"search": {**dict.fromkeys(("draft", "improve", "debug", "crossover"), search_context.operator_context),
                               "review": search_context.review_context},
                    "tools": {**context.BUILDERS, **context.TOOLS_BUILDERS}}.get(kind, context.BUILDERS)
        sections = agent.view.reply.sections if agent.view.reply else ()
        for template, text in agent.templates.items():
            assert template in MUST[kind], f"{agent_name}: say what its {template} template must show"
            if kind == "search" and template == "format_error":  # rendered with these (mlab.search.operators)
                variables = {"error": "«error»", "code_file": "«code_file»", "reply_format": "r", "tool_names": []}
            else:
                variables = builders[template](**sample_markers(builders[template], house_task, sections))
            rendered = env.from_string(text).render(**variables)
            must = [house_task.view.problem.strip()[:60] if m == PROBLEM else m for m in MUST[kind][template]]
            if template in ("reply_format", "fallback_reply_format"):
                shown = [s for s in sections if template == "fallback_reply_format" or s.kind == "text"
                         or kind != "tools"]
                must += [s.name.rpartition(".")[2] for s in shown]  # a JSON reply's keys are its names' last parts
                must += [s.instruction.strip()[:40] for s in shown if kind != "json" or s.kind != "json"]
            missing = [m for m in must if m not in rendered]
            assert not missing, f"{agent_name}'s {template} template does not show {missing}"
    assert kinds == {"sections", "json", "tools", "search"}


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
