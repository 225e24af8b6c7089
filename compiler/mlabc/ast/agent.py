"""The entries of action sets and agents, linear, search and external."""
from __future__ import annotations

from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Param, Value, node
from .task import Limit

__all__ = [
    'Describe', 'Input', 'Returns', 'Does', 'Tier', 'Tool', 'Action', 'DropAction',
    'UsesActions', 'Show', 'Hide', 'Model', 'History', 'Summarize', 'Retries', 'Prompt',
    'FormatError', 'Section', 'RespondSetting', 'Respond', 'DropSection', 'NamedPrompt', 'Prompts',
    'Hook', 'Search', 'Command', 'Env', 'NoDeps', 'Dialect', 'Submits',
]


# ---- actions ------------------------------------------------------------

@node
class Describe(Entry):
    value: Value
    keyword: ClassVar[str] = "describe"


@node
class Input(Entry):
    name: Ident
    type: Ident
    default: Value | None
    description: Value
    keyword: ClassVar[str] = "input"
    repeatable: ClassVar[bool] = True


@node
class Returns(Entry):
    value: Value
    keyword: ClassVar[str] = "returns"


@node
class Does(Entry):
    primitive: Ident
    params: tuple[Param, ...]
    keyword: ClassVar[str] = "does"


@node
class Tier(Entry):
    name: Ident
    keyword: ClassVar[str] = "model"


@node
class Tool(Entry):
    """`tool "submit"`: the name the action has as a provider tool."""
    value: Value
    keyword: ClassVar[str] = "tool"


@node
class Action(Entry):
    name: Value
    entries: tuple[Entry, ...]
    keyword: ClassVar[str] = "action"
    repeatable: ClassVar[bool] = True


@node
class DropAction(Entry):
    name: Value
    keyword: ClassVar[str] = "drop action"
    repeatable: ClassVar[bool] = True


# ---- agents -------------------------------------------------------------

@node
class UsesActions(Entry):
    name: Ident
    keyword: ClassVar[str] = "actions"


@node
class Show(Entry):
    value: Value
    keyword: ClassVar[str] = "show"
    repeatable: ClassVar[bool] = True


@node
class Hide(Entry):
    value: Value
    keyword: ClassVar[str] = "hide"
    repeatable: ClassVar[bool] = True


@node
class Model(Entry):
    tier: Ident
    default: Value
    params: tuple[Limit, ...]
    keyword: ClassVar[str] = "model"
    repeatable: ClassVar[bool] = True


@node
class History(Entry):
    value: Value
    keyword: ClassVar[str] = "history"


@node
class Summarize(Entry):
    value: Value
    keyword: ClassVar[str] = "summarize"


@node
class Retries(Entry):
    value: Value
    keyword: ClassVar[str] = "retries"


@node
class Prompt(Entry):
    value: Value
    keyword: ClassVar[str] = "prompt"


@node
class FormatError(Entry):
    value: Value
    keyword: ClassVar[str] = "format_error"


@node
class Section:
    word: str  # "section" or "field"
    name: Value
    role: Ident | None
    kind: Ident | None
    instruction: Value
    span: Span


@node
class RespondSetting:
    """A `KEY value` setting inside `respond tools { ... }`."""
    key: Ident
    value: Value
    span: Span


@node
class Respond(Entry):
    format: Ident
    sections: tuple[Section, ...]
    settings: tuple[RespondSetting, ...] = ()
    keyword: ClassVar[str] = "respond"


@node
class DropSection(Entry):
    name: Value
    keyword: ClassVar[str] = "drop section"
    repeatable: ClassVar[bool] = True


@node
class NamedPrompt:
    name: Ident
    value: Value
    span: Span


@node
class Prompts(Entry):
    items: tuple[NamedPrompt, ...]
    keyword: ClassVar[str] = "prompts"


@node
class Hook(Entry):
    time: Ident
    name: Ident
    keyword: ClassVar[str] = "hook"
    repeatable: ClassVar[bool] = True


@node
class Search(Entry):
    """`search POLICY { key value ... }`: a tree-search policy instead of the linear loop."""
    policy: Ident
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "search"


# ---- external agents (`agent NAME external { ... }`) ------------------------

@node
class Command(Entry):
    value: Value
    keyword: ClassVar[str] = "command"


@node
class Env(Entry):
    items: tuple[Limit, ...]
    keyword: ClassVar[str] = "env"


@node
class NoDeps(Entry):
    value: Value
    keyword: ClassVar[str] = "no_deps"


@node
class Dialect(Entry):
    """`dialect NAME`: the wire protocol the agent's model client speaks to the gateway."""
    value: Value
    keyword: ClassVar[str] = "dialect"


@node
class Submits(Entry):
    value: Value
    keyword: ClassVar[str] = "submits"
