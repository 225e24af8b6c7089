"""The view of a compiled experiment (experiments/NAME.yaml, spec/experiment.schema.json)."""
from __future__ import annotations

from collections.abc import Mapping

from mlab.documents.view import EMPTY, View
from mlab.documents.task import Limits


class TaskSelection(View):
    """Which tasks an experiment runs: all of them, these names, or one category."""

    all: bool = False
    names: tuple[str, ...] | None = None
    category: str | None = None


class Override(View):
    """What an experiment changes for one task."""

    data: str | None = None
    limits: Limits = Limits()
    agents: tuple[str, ...] | None = None
    runs: int | None = None
    models: Mapping[str, tuple[str, ...]] | None = None


class AgentOverride(View):
    """What an experiment changes for one agent."""

    limits: Limits = Limits()


class Experiment(View):
    """A compiled experiment (experiments/NAME.yaml)."""

    schema: str
    schema_version: int
    name: str
    tasks: TaskSelection
    agents: tuple[str, ...]
    models: Mapping[str, tuple[str, ...]]
    runs: int
    data: str
    limits: Limits = Limits()
    retries: int = 0
    overrides: Mapping[str, Override] = EMPTY
    agent_overrides: Mapping[str, AgentOverride] = EMPTY


