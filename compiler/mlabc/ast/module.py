"""Declarations (task, actions, agent, experiment), `use` lines and the module of one file."""
from __future__ import annotations

from typing import ClassVar

from ..diagnostics import Span
from .base import Entry, Ident, Int, Str, node

__all__ = [
    'Use', 'Decl', 'Task', 'Actions', 'Agent', 'ExternalAgent', 'Experiment', 'Module',
]


# ---- declarations -------------------------------------------------------

@node
class Use:
    std: bool
    target: Str
    span: Span
    version: "Int | None" = None  # `use std "agents" version 3`: the standard-library release pinned


@node
class Decl:
    name: Ident
    entries: tuple[Entry, ...]
    span: Span
    kind: ClassVar[str] = ""


@node
class Task(Decl):
    kind: ClassVar[str] = "task"


@node
class Actions(Decl):
    parent: Ident | None = None
    kind: ClassVar[str] = "actions"


@node
class Agent(Decl):
    parent: Ident | None = None
    kind: ClassVar[str] = "agent"


@node
class ExternalAgent(Agent):
    """`agent NAME external { ... }`: a command from outside mlab; an agent for references and `extends`."""


@node
class Experiment(Decl):
    kind: ClassVar[str] = "experiment"


@node
class Module:
    path: str
    uses: tuple[Use, ...]
    decls: tuple[Decl, ...]
