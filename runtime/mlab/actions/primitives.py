"""The registry of runtime primitives: name → implementation, with its input and parameter contract.

The names, inputs and parameters here are exactly those of spec/primitives.json (a test keeps
them in step). Each action table owns a registry made by `base_registry()`; its model-backed
primitives are placeholders that answer that a model is required, until the agent loop puts
the real ones into that table's registry (`PrimitiveRegistry.implement`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from mlab.actions import files as file_actions
from mlab.actions.history import EditHistory, ResearchLog
from mlab.observation import Observation, error
from mlab.actions.scripts import ScriptSettings, execute_script
from mlab.actions.tables import describe_table
from mlab.actions.workspace import Workspace
from mlab.build import TaskBuild
from mlab.documents.agent import Action
PrimitiveFunction = Callable[["PrimitiveContext", dict, dict], Observation]


class ModelService(Protocol):
    """Calls the model of a tier (the run's ModelClient)."""

    def complete(self, tier: str, prompt: str, *, purpose: str, stable_prefix: str | None = None) -> Any: ...


class TemplateService(Protocol):
    """Renders the agent's compiled prompt templates."""

    def render(self, name: str, **variables: Any) -> str: ...


@dataclass
class RunServices:
    """What later layers give a run's primitives; the agent loop fills it in, and the
    non-model primitives never read it. A run driven by a fixed list of actions has no model."""

    models: ModelService | None = None
    templates: TemplateService | None = None
    task: TaskBuild | None = None
    history_text: str = ""  # the rendered recent steps, which the Reflection action shows its model
    calls: list[dict] = field(default_factory=list)  # this step's model calls, for its trace record
    model_failure: Exception | None = None  # a model that failed for good: the loop ends the run


@dataclass
class PrimitiveContext:
    """What a primitive may use: the workspace and the run's state, for one step."""

    workspace: Workspace
    edits: EditHistory
    research_log: ResearchLog
    scripts: ScriptSettings
    step: int
    action: Action
    services: RunServices = field(default_factory=RunServices)


@dataclass(frozen=True)
class Primitive:
    name: str
    inputs: dict[str, str]
    params: dict[str, Any]
    run: PrimitiveFunction
    model: bool = False


class PrimitiveRegistry:
    """Primitive name → implementation, for one action table.

    Each table gets its own (`base_registry()`), so the agent loop swapping in the
    model-backed implementations changes its own run's table and nothing else.
    """

    def __init__(self) -> None:
        self._primitives: dict[str, Primitive] = {}

    def register(self, name: str, inputs: dict[str, str], params: dict[str, Any], run: PrimitiveFunction,
                 model: bool = False, replace: bool = False) -> Primitive:
        """Add a primitive (or, with replace, swap an implementation keeping its contract)."""
        if name in self._primitives and not replace:
            raise ValueError(f"primitive {name!r} is already registered")
        primitive = Primitive(name, dict(inputs), dict(params), run, model)
        self._primitives[name] = primitive
        return primitive

    def implement(self, name: str, run: PrimitiveFunction) -> Primitive:
        """Swap the implementation of a registered primitive; its contract stays as declared."""
        current = self._primitives[name]
        return self.register(name, current.inputs, current.params, run, model=current.model, replace=True)

    def get(self, name: str) -> Primitive | None:
        return self._primitives.get(name)

    def __getitem__(self, name: str) -> Primitive:
        return self._primitives[name]

    def __contains__(self, name: object) -> bool:
        return name in self._primitives

    def __iter__(self):
        return iter(self._primitives)

    def items(self):
        return self._primitives.items()


def model_required(name: str) -> PrimitiveFunction:
    def placeholder(ctx, inputs, params) -> Observation:
        return error(f"the action {ctx.action.name} needs a language model, and this run "
                     "has none (it is driven by a fixed list of actions); use the other actions")
    return placeholder


def not_installed(ctx, inputs, params) -> Observation:
    """The placeholder of a primitive that whoever drives the run installs (validate_submission)."""
    return error(f"the action {ctx.action.name!r} is not available in this run; use the other actions")


def base_registry() -> PrimitiveRegistry:
    """A new registry of the runtime's primitives; the model-backed ones answer that a model is required."""
    registry = PrimitiveRegistry()
    register = registry.register
    register("list_files", {"dir_path": "path"}, {}, file_actions.list_files)
    register("read_file", {"file_name": "path"}, {"max_chars": 20000}, file_actions.read_file)
    register("write_file", {"file_name": "path", "content": "text"}, {}, file_actions.write_file)
    register("append_file", {"file_name": "path", "content": "text"}, {}, file_actions.append_file)
    register("copy_file", {"source": "path", "destination": "path"}, {}, file_actions.copy_file)
    register("inspect_lines", {"script_name": "path", "start_line_number": "int", "end_line_number": "int"},
             {"max_lines": 100}, file_actions.inspect_lines)
    register("undo_edit", {"script_name": "path"}, {}, file_actions.undo_edit)
    register("describe_table", {"file_name": "path"}, {"max_rows": 100000, "max_columns": 60}, describe_table)
    register("execute_script", {"script_name": "path"}, {"max_output_chars": 10000}, execute_script)
    register("final_answer", {"final_answer": "text"}, {}, file_actions.final_answer)
    register("append_log", {"content": "text"}, {}, file_actions.append_log)
    # needs the run's task and the metrics' value kinds: mlab.scoring.validation installs it
    register("validate_submission", {}, {}, not_installed)

    register("understand_file", {"file_name": "path", "things_to_look_for": "text"}, {"chunk_chars": 10000},
             model_required("understand_file"), model=True)
    register("edit_script", {"script_name": "path", "edit_instruction": "text", "save_name": "path"}, {},
             model_required("edit_script"), model=True)
    register("edit_script_segment", {"script_name": "path", "start_line_number": "int", "end_line_number": "int",
                                     "edit_instruction": "text", "save_name": "path"}, {"max_lines": 200},
             model_required("edit_script_segment"), model=True)
    register("reflection", {"things_to_reflect_on": "text"}, {}, model_required("reflection"), model=True)
    register("retrieve_log", {"current_plan": "text"}, {}, model_required("retrieve_log"), model=True)
    return registry
