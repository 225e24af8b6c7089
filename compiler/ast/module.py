"""Declarations (task, actions, agent, experiment), `use` lines and the module of one file."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Int, Str

__all__ = [
    'Use', 'Decl', 'Task', 'Actions', 'Agent', 'ExternalAgent', 'Experiment', 'Module',
]


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
