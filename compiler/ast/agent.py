"""The entries of action sets and agents, linear, search and external."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Param, Value
from .task import Limit

__all__ = [
    'Describe', 'Input', 'Returns', 'Does', 'Tier', 'Tool', 'Action', 'DropAction',
    'UsesActions', 'Show', 'Hide', 'Model', 'History', 'Summarize', 'Retries', 'Prompt',
    'FormatError', 'Section', 'RespondSetting', 'Respond', 'DropSection', 'NamedPrompt', 'Prompts',
    'Hook', 'Search', 'Command', 'Env', 'NoDeps', 'Submits',
]


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
