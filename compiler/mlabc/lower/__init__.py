"""Lowering: checked declarations → the plain data of the build (tasks, agents, actions, experiments).

Each module lowers one kind of declaration and reports what is wrong with it; templates.py
checks the Jinja templates an agent's prompt is made of.
"""
from __future__ import annotations

from .actions import ActionSetResolver, lower_actions
from .agent import AgentResolver, lower_agent
from .experiment import lower_experiment
from .task import lower_task

__all__ = ["ActionSetResolver", "AgentResolver", "lower_actions", "lower_agent", "lower_experiment", "lower_task"]
