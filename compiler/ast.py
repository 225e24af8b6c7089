"""The typed AST of .mlab files: frozen dataclasses, one per grammar rule.

Class names follow the rule names of grammars/mlab.lark (CamelCase of the
snake_case rule). Every node carries the Span it came from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .diagnostics import Span


# ---- values -------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    span: Span
    kind: ClassVar[str] = "value"


@dataclass(frozen=True)
class Str(Value):
    value: str
    triple: bool = False
    indent: int = 0  # columns that dedenting removed, to map template columns back to the file
    kind: ClassVar[str] = "string"


@dataclass(frozen=True)
class Int(Value):
    value: int
    kind: ClassVar[str] = "integer"


@dataclass(frozen=True)
class Float(Value):
    value: float
    kind: ClassVar[str] = "number"


@dataclass(frozen=True)
class Duration(Value):
    seconds: float
    text: str
    kind: ClassVar[str] = "duration"


@dataclass(frozen=True)
class Size(Value):
    bytes: int
    text: str
    kind: ClassVar[str] = "size"


@dataclass(frozen=True)
class Percent(Value):
    fraction: float
    text: str
    kind: ClassVar[str] = "percentage"


@dataclass(frozen=True)
class Name(Value):
    value: str
    kind: ClassVar[str] = "name"


@dataclass(frozen=True)
class List(Value):
    items: tuple[Value, ...]
    kind: ClassVar[str] = "list"


@dataclass(frozen=True)
class Ident:
    """A name in a fixed position (a declaration's name, a keyword argument)."""

    value: str
    span: Span


# ---- entries ------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One keyword-led line of a block. `keyword` names it in diagnostics."""

    span: Span
    keyword: ClassVar[str] = ""
    repeatable: ClassVar[bool] = False


@dataclass(frozen=True)
class Title(Entry):
    value: Value
    keyword: ClassVar[str] = "title"


@dataclass(frozen=True)
class Category(Entry):
    value: Value
    keyword: ClassVar[str] = "category"


@dataclass(frozen=True)
class Problem(Entry):
    value: Value
    keyword: ClassVar[str] = "problem"


@dataclass(frozen=True)
class Starter(Entry):
    value: Value
    keyword: ClassVar[str] = "starter"


@dataclass(frozen=True)
class ReadOnly(Entry):
    value: Value
    keyword: ClassVar[str] = "read_only"


@dataclass(frozen=True)
class Requires(Entry):
    value: Value
    keyword: ClassVar[str] = "requires"


@dataclass(frozen=True)
class Submission(Entry):
    file: Value
    columns: Value
    keyword: ClassVar[str] = "submission"


@dataclass(frozen=True)
class Metric(Entry):
    name: Ident
    on: Value | None
    direction: Ident | None
    params: tuple["Param", ...] = ()
    keyword: ClassVar[str] = "metric"


@dataclass(frozen=True)
class BaselineRun(Entry):
    script: Value
    keyword: ClassVar[str] = "baseline"


@dataclass(frozen=True)
class BaselineValue(Entry):
    value: Value
    reason: Value
    keyword: ClassVar[str] = "baseline"


@dataclass(frozen=True)
class Reference(Entry):
    """`reference "expert" 0.912 source "..."`: a published or measured score of the task."""
    label: Value
    value: Value
    source: Value | None
    keyword: ClassVar[str] = "reference"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Thresholds(Entry):
    """`thresholds { gold X silver Y bronze Z source "..." }`: medal thresholds (MLE-bench)."""
    items: tuple["Limit", ...]
    keyword: ClassVar[str] = "thresholds"


@dataclass(frozen=True)
class Success(Entry):
    threshold: Value
    keyword: ClassVar[str] = "success"


@dataclass(frozen=True)
class DefaultAgent(Entry):
    name: Ident
    keyword: ClassVar[str] = "agent"


@dataclass(frozen=True)
class Demo(Entry):
    value: Value
    keyword: ClassVar[str] = "demo"


@dataclass(frozen=True)
class Evaluator(Entry):
    target: Value
    reason: Value
    keyword: ClassVar[str] = "evaluator"


@dataclass(frozen=True)
class Version(Entry):
    value: Value
    keyword: ClassVar[str] = "version"


@dataclass(frozen=True)
class Change:
    """One entry of `changes { 2 "what changed" because "why" }`."""
    version: Value
    what: Value
    why: Value
    span: Span


@dataclass(frozen=True)
class Changes(Entry):
    items: tuple[Change, ...]
    keyword: ClassVar[str] = "changes"


@dataclass(frozen=True)
class KnownIssue(Entry):
    """`issue "text" since 1 fixed 2`: a declared known issue of the task (`fixed` None while open)."""
    text: Value
    since: Value
    fixed: Value | None
    keyword: ClassVar[str] = "issue"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Limit:
    key: Ident
    value: Value
    span: Span


@dataclass(frozen=True)
class Limits(Entry):
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "limits"


@dataclass(frozen=True)
class HardwareEntry:
    key: Ident
    value: Value
    need: Ident | None
    span: Span


@dataclass(frozen=True)
class Hardware(Entry):
    items: tuple[HardwareEntry, ...]
    keyword: ClassVar[str] = "hardware"


@dataclass(frozen=True)
class Source(Entry):
    kind_: Ident
    value: Value
    keyword: ClassVar[str] = "from"


@dataclass(frozen=True)
class Split(Entry):
    method: Ident
    args: tuple[Value, ...]
    seed: Value | None
    keyword: ClassVar[str] = "split"


@dataclass(frozen=True)
class Validation(Entry):
    """`validation 0.1`: the share of the training rows the harness holds out for validation."""
    value: Value
    keyword: ClassVar[str] = "validation"


@dataclass(frozen=True)
class IdColumn(Entry):
    value: Value
    keyword: ClassVar[str] = "id"


@dataclass(frozen=True)
class Answers(Entry):
    value: Value
    keyword: ClassVar[str] = "answers"


@dataclass(frozen=True)
class Public(Entry):
    value: Value
    keyword: ClassVar[str] = "public"


@dataclass(frozen=True)
class Private(Entry):
    value: Value
    keyword: ClassVar[str] = "private"


@dataclass(frozen=True)
class Checksum(Entry):
    file: Value
    digest: Value
    keyword: ClassVar[str] = "checksum"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Prepare(Entry):
    value: Value
    keyword: ClassVar[str] = "prepare"


@dataclass(frozen=True)
class Data(Entry):
    name: Ident
    entries: tuple[Entry, ...]
    keyword: ClassVar[str] = "data"
    repeatable: ClassVar[bool] = True


# ---- actions ------------------------------------------------------------

@dataclass(frozen=True)
class Describe(Entry):
    value: Value
    keyword: ClassVar[str] = "describe"


@dataclass(frozen=True)
class Input(Entry):
    name: Ident
    type: Ident
    default: Value | None
    description: Value
    keyword: ClassVar[str] = "input"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Returns(Entry):
    value: Value
    keyword: ClassVar[str] = "returns"


@dataclass(frozen=True)
class Param:
    name: Ident
    value: Value
    span: Span


@dataclass(frozen=True)
class Does(Entry):
    primitive: Ident
    params: tuple[Param, ...]
    keyword: ClassVar[str] = "does"


@dataclass(frozen=True)
class Tier(Entry):
    name: Ident
    keyword: ClassVar[str] = "model"


@dataclass(frozen=True)
class Tool(Entry):
    """`tool "submit"`: the name the action has as a provider tool."""
    value: Value
    keyword: ClassVar[str] = "tool"


@dataclass(frozen=True)
class Action(Entry):
    name: Value
    entries: tuple[Entry, ...]
    keyword: ClassVar[str] = "action"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class DropAction(Entry):
    name: Value
    keyword: ClassVar[str] = "drop action"
    repeatable: ClassVar[bool] = True


# ---- agents -------------------------------------------------------------

@dataclass(frozen=True)
class UsesActions(Entry):
    name: Ident
    keyword: ClassVar[str] = "actions"


@dataclass(frozen=True)
class Show(Entry):
    value: Value
    keyword: ClassVar[str] = "show"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Hide(Entry):
    value: Value
    keyword: ClassVar[str] = "hide"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Model(Entry):
    tier: Ident
    default: Value
    params: tuple[Limit, ...]
    keyword: ClassVar[str] = "model"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class History(Entry):
    value: Value
    keyword: ClassVar[str] = "history"


@dataclass(frozen=True)
class Summarize(Entry):
    value: Value
    keyword: ClassVar[str] = "summarize"


@dataclass(frozen=True)
class Retries(Entry):
    value: Value
    keyword: ClassVar[str] = "retries"


@dataclass(frozen=True)
class Prompt(Entry):
    value: Value
    keyword: ClassVar[str] = "prompt"


@dataclass(frozen=True)
class FormatError(Entry):
    value: Value
    keyword: ClassVar[str] = "format_error"


@dataclass(frozen=True)
class Section:
    word: str  # "section" or "field"
    name: Value
    role: Ident | None
    kind: Ident | None
    instruction: Value
    span: Span


@dataclass(frozen=True)
class RespondSetting:
    """A `KEY value` setting inside `respond tools { ... }`."""
    key: Ident
    value: Value
    span: Span


@dataclass(frozen=True)
class Respond(Entry):
    format: Ident
    sections: tuple[Section, ...]
    settings: tuple[RespondSetting, ...] = ()
    keyword: ClassVar[str] = "respond"


@dataclass(frozen=True)
class DropSection(Entry):
    name: Value
    keyword: ClassVar[str] = "drop section"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class NamedPrompt:
    name: Ident
    value: Value
    span: Span


@dataclass(frozen=True)
class Prompts(Entry):
    items: tuple[NamedPrompt, ...]
    keyword: ClassVar[str] = "prompts"


@dataclass(frozen=True)
class Hook(Entry):
    time: Ident
    name: Ident
    keyword: ClassVar[str] = "hook"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class Search(Entry):
    """`search POLICY { key value ... }`: a tree-search policy instead of the linear loop."""
    policy: Ident
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "search"


# ---- external agents (`agent NAME external { ... }`) ------------------------

@dataclass(frozen=True)
class Command(Entry):
    value: Value
    keyword: ClassVar[str] = "command"


@dataclass(frozen=True)
class Env(Entry):
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "env"


@dataclass(frozen=True)
class NoDeps(Entry):
    value: Value
    keyword: ClassVar[str] = "no_deps"


@dataclass(frozen=True)
class Submits(Entry):
    value: Value
    keyword: ClassVar[str] = "submits"


# ---- experiments --------------------------------------------------------

@dataclass(frozen=True)
class ExpTasks(Entry):
    value: Value
    keyword: ClassVar[str] = "tasks"


@dataclass(frozen=True)
class ExpTasksCategory(Entry):
    name: Ident
    keyword: ClassVar[str] = "tasks"


@dataclass(frozen=True)
class ExpAgents(Entry):
    value: Value
    keyword: ClassVar[str] = "agents"


@dataclass(frozen=True)
class ExpModels(Entry):
    tier: Ident | None
    value: Value
    keyword: ClassVar[str] = "models"
    repeatable: ClassVar[bool] = True


@dataclass(frozen=True)
class ExpRuns(Entry):
    value: Value
    keyword: ClassVar[str] = "runs"


@dataclass(frozen=True)
class ExpData(Entry):
    value: Value
    keyword: ClassVar[str] = "data"


@dataclass(frozen=True)
class ExpRetries(Entry):
    value: Value
    keyword: ClassVar[str] = "retries"


@dataclass(frozen=True)
class ExpOverride(Entry):
    name: Ident
    entries: tuple[Entry, ...]
    agent: bool = False  # `override agent NAME { limits {...} }`: the limits of one agent's runs
    keyword: ClassVar[str] = "override"
    repeatable: ClassVar[bool] = True


# ---- declarations -------------------------------------------------------

@dataclass(frozen=True)
class Use:
    std: bool
    target: Str
    span: Span
    version: "Int | None" = None  # `use std "agents" version 3`: the standard-library release pinned


@dataclass(frozen=True)
class Decl:
    name: Ident
    entries: tuple[Entry, ...]
    span: Span
    kind: ClassVar[str] = ""


@dataclass(frozen=True)
class Task(Decl):
    kind: ClassVar[str] = "task"


@dataclass(frozen=True)
class Actions(Decl):
    parent: Ident | None = None
    kind: ClassVar[str] = "actions"


@dataclass(frozen=True)
class Agent(Decl):
    parent: Ident | None = None
    kind: ClassVar[str] = "agent"


@dataclass(frozen=True)
class ExternalAgent(Agent):
    """`agent NAME external { ... }`: a command from outside mlab; an agent for references and `extends`."""


@dataclass(frozen=True)
class Experiment(Decl):
    kind: ClassVar[str] = "experiment"


@dataclass(frozen=True)
class Module:
    path: str
    uses: tuple[Use, ...]
    decls: tuple[Decl, ...]
