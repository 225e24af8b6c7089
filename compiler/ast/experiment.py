"""The entries of an experiment block."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .base import Entry, Ident, Value

__all__ = [
    'ExpTasks', 'ExpTasksCategory', 'ExpAgents', 'ExpModels', 'ExpRuns', 'ExpData', 'ExpRetries',
    'ExpOverride',
]


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
