"""Check a loaded Program and lower it to IR: names, references, and every
per-declaration check. All diagnostics of a run are collected, sorted by position."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import ast as A
from ..diagnostics import Diagnostic
from .loader import Program
from ..resources import std_dir
from ..lower.actions import ActionSetResolver
from ..lower.agent import AgentResolver, lower_agent
from ..lower.demo import check_demo_players
from ..lower.experiment import lower_experiment
from ..lower.external import ExternalResolver, crosses_kinds, lower_external
from ..lower.task import lower_task
from ..values import Reporter, did_you_mean

KIND_CODES = {"agent": "E304", "task": "E305", "actions": "E303"}


@dataclass
class CompiledAgent:
    ir: dict
    actions: dict
    templates: dict[str, str]
    path: str


@dataclass
class Compiled:
    program: Program
    tasks: dict[str, tuple[dict, str]] = field(default_factory=dict)
    agents: dict[str, CompiledAgent] = field(default_factory=dict)
    experiments: dict[str, tuple[dict, str]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def _collect(program: Program, report: Reporter) -> dict[str, dict[str, tuple[A.Decl, str]]]:
    """Declarations by kind and name; a second declaration of a name is an error."""
    table: dict[str, dict[str, tuple[A.Decl, str]]] = {"task": {}, "actions": {}, "agent": {}, "experiment": {}}
    for path, decl in program.decls():
        kind_table = table[decl.kind]
        name = decl.name.value
        if name in kind_table:
            first = kind_table[name][0].name.span
            report.error("E301", f"{decl.kind} `{name}` is declared twice", decl.name.span,
                         hint=f"the first is at {first.path}:{first.line}")
            continue
        kind_table[name] = (decl, path)
    return table


class Checker:
    def __init__(self, program: Program, data: bool = False):
        self.program = program
        self.data = data
        self.report = Reporter(list(program.diagnostics))
        self.table = _collect(program, self.report)

    def reference(self, kind: str, name: str, span, from_path: str, what: str) -> bool:
        """Is `name` a declaration of `kind` that the file `from_path` can see?"""
        declared = self.table[kind].get(name)
        if declared and declared[1] in self.program.visible_files(from_path):
            return True
        code = KIND_CODES[kind]
        if declared:
            hint = f"it is declared in {declared[1]}; add `use` for that file"
            if Path(declared[1]).parent.name == "std":
                hint = f'add `use std "{Path(declared[1]).stem}"`'
            self.report.error(code, f"{what} `{name}` is not visible here", span, hint)
        else:
            visible = [n for n, (_, p) in self.table[kind].items()]
            self.report.error(code, f"unknown {what} `{name}`", span, did_you_mean(name, visible, f"{what}s")
                              if visible else None)
        return False

    def _pinned_away(self) -> dict[str, tuple[str, set[str]]]:
        """For each file pinned to an earlier release of the standard library: (the library's folder, the
        actions its agents came to show since), which the file's agents do not inherit."""
        from .loader import shown_since, std_release

        folder = (self.program.std or std_dir()).resolve()
        current = std_release(folder)
        pinned: dict[str, tuple[str, set[str]]] = {}
        for path, module in self.program.modules.items():
            versions = [u.version.value for u in module.uses if u.std and u.version is not None]
            if versions and min(versions) < current:
                pinned[path] = (str(folder), shown_since(folder, min(versions)))
        return pinned

    def run(self) -> Compiled:
        out = Compiled(self.program)
        action_sets = ActionSetResolver({name: decl for name, (decl, _) in self.table["actions"].items()},
                                        self.report).all()
        for name, (decl, path) in self.table["actions"].items():
            if decl.parent is not None and decl.parent.value in self.table["actions"]:
                self.reference("actions", decl.parent.value, decl.parent.span, path, "action set")
        all_actions = {a["name"] for actions in action_sets.values() for a in actions}
        agents = {name: decl for name, (decl, _) in self.table["agent"].items()}
        resolver = AgentResolver(agents, self.report, self._pinned_away())
        external = ExternalResolver(agents, self.report, resolver.model_entry)
        for name, (decl, path) in self.table["agent"].items():
            if crosses_kinds(decl, agents, self.report):
                continue
            if isinstance(decl, A.ExternalAgent):  # a command from outside mlab (lower/external.py)
                settings = external.resolve(name)
                if settings is not None and decl.parent is not None:
                    self.reference("agent", decl.parent.value, decl.parent.span, path, "agent")
                lowered = lower_external(decl, settings, self.report) if settings is not None else None
                if lowered is not None:
                    out.agents[name] = CompiledAgent(*lowered, path=path)
                continue
            settings = resolver.resolve(name)
            if settings is None:
                continue
            if decl.parent is not None:
                self.reference("agent", decl.parent.value, decl.parent.span, path, "agent")
            set_ref = settings["action_set"]
            if set_ref is not None and set_ref.value in self.table["actions"] and set_ref.value not in action_sets:
                continue  # its set extends a broken one, reported there
            if set_ref is not None and set_ref.value in action_sets:
                # the file that set the action set must see it
                origin = set_ref.span.path
                self.reference("actions", set_ref.value, set_ref.span, origin, "action set")
            lowered = lower_agent(decl, settings, action_sets, all_actions, self.report)
            if lowered is not None:
                out.agents[name] = CompiledAgent(*lowered, path=path)
        for name, (decl, path) in self.table["task"].items():
            errors = len(self.report.diagnostics)
            ir, agent_ref = lower_task(decl, Path(path).resolve().parent, self.report)
            if self.data and len(self.report.diagnostics) == errors:  # a task checked clean so far
                from ..data_model.locate import check_task_data

                check_task_data(decl, ir, Path(path).resolve().parent, self.report)
            if agent_ref is not None:
                self.reference("agent", agent_ref.value, agent_ref.span, path, "agent")
            out.tasks[name] = (ir, path)
        for name, (decl, path) in self.table["experiment"].items():
            ir, refs = lower_experiment(decl, self.report)
            checked: set[str] = set()
            for kind, node in refs:
                if self.reference(kind, node.value, node.span, path, kind) and kind == "task" \
                        and node.value in out.tasks and node.value not in checked:
                    checked.add(node.value)
                    self._check_variant(ir, node, out.tasks[node.value][0])
            out.experiments[name] = (ir, path)
        self._check_demonstrations(out)
        out.diagnostics = _sorted_unique(self.report.diagnostics)
        return out

    def _check_demonstrations(self, out: Compiled) -> None:
        """A task's demonstration must be playable by every agent that plays it: the task's default
        agent and each agent an experiment runs the task with (tree-search agents play it as
        operators' variants, so they are not held to its steps)."""
        players: dict[str, dict[str, str]] = {name: {} for name in out.tasks}
        for name, (ir, _) in out.tasks.items():
            players[name][ir["agent"]] = "the task's default agent"
        for experiment, _ in out.experiments.values():
            for task, (ir, _) in out.tasks.items():
                selected = experiment["tasks"]
                if not (selected.get("all") or task in selected.get("names", ())
                        or selected.get("category") == ir["category"]):
                    continue
                agents = experiment["overrides"].get(task, {}).get("agents") or experiment["agents"]
                for agent in agents:
                    players[task].setdefault(agent, f"in experiment `{experiment['name']}`")
        for name, (ir, path) in out.tasks.items():
            table = {agent: (why, out.agents[agent].actions) for agent, why in players[name].items()
                     if agent in out.agents and not out.agents[agent].ir.get("search")}
            check_demo_players(self.table["task"][name][0], ir, Path(path).resolve().parent, table, self.report)


    def _check_variant(self, experiment: dict, task_node, task: dict) -> None:
        """A task named by an experiment must declare the data variant the experiment runs it on."""
        name = task_node.value
        variant = experiment["overrides"].get(name, {}).get("data") or experiment["data"]
        if variant and task["data"] and variant not in task["data"]:
            has = ", ".join(sorted(task["data"]))
            self.report.error("E405", f"experiment `{experiment['name']}` runs task `{name}` on data `{variant}`, "
                              f"which the task does not declare (it has: {has})", task_node.span,
                              hint=f"add `override {name} {{ data {sorted(task['data'])[0]} }}` to the experiment, "
                                   f"or a `data {variant} {{ ... }}` variant to the task")


def _sorted_unique(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in sorted(diags, key=Diagnostic.sort_key):
        key = (d.code, d.message, d.span)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def check_program(program: Program, data: bool = False) -> Compiled:
    """The checked program; with `data`, each task's data model too (mlabc.data_model)."""
    return Checker(program, data).run()
