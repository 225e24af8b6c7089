"""Search policies: given the tree so far, what to do next (an operator and the parents it works on).

A policy decides only; the engine makes the node, evaluates it and tells the policy with
`observe`. Each decision gets its own random generator, `random.Random(f"{seed}:{node}")`, drawn
by the engine, so a resumed run (the tree rebuilt from the trace and `observe` replayed over its
nodes in order) decides exactly as the uninterrupted run would have. With parallel evaluations the
engine calls `decide` while nodes are still pending; a policy must count them as made.

Policies are found by name in mlab.search.policies, which imports the module defining one (its
`POLICY`) on first use.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from mlab.search.tree import Node, Tree


@dataclass(frozen=True)
class Decision:
    """Make a node with `operator` from `parents` (none for a draft); `facts` go into its record."""
    operator: str
    parents: tuple[int, ...] = ()
    facts: dict = field(default_factory=dict)


class Policy:
    """Base class: `params` are the compiled agent's, every default filled in by the compiler."""

    name = ""
    operators: tuple[str, ...] = ("draft", "improve", "debug")

    def __init__(self, params: dict):
        self.params = dict(params)

    def decide(self, tree: Tree, rng: random.Random) -> Decision | None:
        """The next node to make, or None when the policy has nothing more to do."""
        raise NotImplementedError

    def observe(self, tree: Tree, node: Node) -> None:
        """Called once the node's evaluation is in the tree (and again, in order, on resume)."""


class Greedy(Policy):
    """AIDE's greedy policy (Jiang et al., 2025, "AIDE: AI-Driven Exploration in the Space of Code").

    Draft until `drafts` drafts exist; then, with probability `debug_probability`, debug a buggy
    leaf whose debug depth is below `max_debug_depth` (chosen at random among them); otherwise
    improve the best valid node; and draft again while no node is valid.
    """

    name = "greedy"

    def __init__(self, params: dict):
        super().__init__(params)
        self.drafts = int(self.params.get("drafts", 5))
        self.debug_probability = float(self.params.get("debug_probability", 0.5))
        self.max_debug_depth = int(self.params.get("max_debug_depth", 3))

    def decide(self, tree: Tree, rng: random.Random) -> Decision:
        if len(tree.drafts()) < self.drafts:
            return Decision("draft", facts={"reason": "initial drafts"})
        if rng.random() < self.debug_probability:
            debuggable = [node for node in tree.buggy_leaves()
                          if tree.debug_depth(node) < self.max_debug_depth]
            if debuggable:
                leaf = rng.choice(debuggable)
                return Decision("debug", (leaf.id,), {"reason": "debug a buggy leaf"})
        best = tree.best(1)
        if not best:
            return Decision("draft", facts={"reason": "no valid node"})
        return Decision("improve", (best[0].id,), {"reason": "improve the best node"})


POLICY = Greedy  # the policy this module defines (mlab.search.policies finds it here)
