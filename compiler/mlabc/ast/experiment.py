"""The entries of an experiment block."""
from __future__ import annotations

from typing import ClassVar

from .base import Entry, Ident, Value, node

__all__ = [
    'ExpTasks', 'ExpTasksCategory', 'ExpAgents', 'ExpModels', 'ExpRuns', 'ExpData', 'ExpRetries',
    'ExpOverride',
]


# ---- experiments --------------------------------------------------------

@node
class ExpTasks(Entry):
    value: Value
    keyword: ClassVar[str] = "tasks"


@node
class ExpTasksCategory(Entry):
    name: Ident
    keyword: ClassVar[str] = "tasks"


@node
class ExpAgents(Entry):
    value: Value
    keyword: ClassVar[str] = "agents"


@node
class ExpModels(Entry):
    tier: Ident | None
    value: Value
    keyword: ClassVar[str] = "models"
    repeatable: ClassVar[bool] = True


@node
class ExpRuns(Entry):
    value: Value
    keyword: ClassVar[str] = "runs"


@node
class ExpData(Entry):
    value: Value
    keyword: ClassVar[str] = "data"


@node
class ExpRetries(Entry):
    value: Value
    keyword: ClassVar[str] = "retries"


@node
class ExpOverride(Entry):
    name: Ident
    entries: tuple[Entry, ...]
    agent: bool = False  # `override agent NAME { limits {...} }`: the limits of one agent's runs
    keyword: ClassVar[str] = "override"
    repeatable: ClassVar[bool] = True
