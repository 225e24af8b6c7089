"""The search policies by name: the module that defines each, imported when an agent names it.

A policy's module defines its class as `POLICY`; a new policy is a module of mlab.search and a
line of POLICY_MODULES (and the compiler's table of its parameters, mlabc's lower/search.py).
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping

from mlab.search.policy import Policy

# policy name → the module under mlab.search that defines it
POLICY_MODULES = {"greedy": "policy", "mcts": "mcts", "evolution": "evolution"}


def policy_class(name: str) -> type[Policy]:
    """The policy called `name`, its module imported on first use."""
    if name not in POLICY_MODULES:
        known = ", ".join(sorted(POLICY_MODULES))
        raise KeyError(f"unknown search policy {name!r} (this runtime knows: {known})")
    return importlib.import_module(f"mlab.search.{POLICY_MODULES[name]}").POLICY


def make_policy(name: str, params: Mapping) -> Policy:
    """The policy a compiled agent's `search` block declares (mlab.documents.Search's policy and
    params), with its parameters."""
    return policy_class(name)(dict(params))
