"""Monte Carlo tree search over candidate solutions (UCT, Kocsis and Szepesvári, 2006; the solution-tree
form of aira-dojo, Toledo et al., 2025, "AI Research Agents for Machine Learning").

The tree's drafts hang under a virtual root. Each decision walks down from the root: a node with
fewer than `children` children is expanded (the root by a draft, a valid node by improve, a buggy
node by debug while its debug depth is below `max_debug_depth`); a full node passes the walk on
to its child with the highest UCT value

    Q(child) + exploration * sqrt(ln N(node) / N(child))

where N counts the evaluated nodes of a subtree (the node itself and its descendants) and Q is the
mean of their values. A node's value is its validation score in the metric's direction, scaled
to [0, 1] by min-max over the valid nodes of the tree so far (the worst valid node 0, the best 1;
1 for all when they are equal); a buggy node's value is 0, the worst. Each value is thus backed up
along the path from its node to the root. Pending nodes count as children made but are never walked
into; a subtree with nothing left to expand (every leaf buggy at the debug limit, or pending) is
closed. When every branch is closed the policy waits (None) while nodes are pending, and drafts a
new branch when none is. The policy stops after `steps` nodes.

Visits and values are recomputed from the tree's scores at every decision, so a resumed run (the
tree rebuilt from the trace) decides as the uninterrupted one; `observe` writes them into the
facts of the observed node's path (`visits`, and `value`, the mean), computed over the nodes made
up to the observed one, so that replaying it gives the same facts. A decision's own facts, which
the node's record keeps, are the walk (`path`) and the UCT value of each step (`uct`). MCTS draws
no random numbers: equal UCT values go to the earlier node.
"""
from __future__ import annotations

import math
import random

from mlab.errors import BuildError
from mlab.search.policy import Decision, Policy
from mlab.search.tree import Node, Tree

# what a parameter may be: a whole number >= 1, a number >= 0, a probability
KINDS = {"count": "a whole number of at least 1", "non-negative": "a number of at least 0",
         "probability": "a number from 0 to 1"}


def checked_params(policy: str, params: dict, kinds: dict[str, str]) -> dict[str, int | float]:
    """The policy's parameters, typed; a missing or ill-typed one (a build made by another mlabc, an
    agent.json edited by hand) is a BuildError that names it, never a traceback mid-run."""
    found = {}
    for name, kind in kinds.items():
        value = params.get(name)
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if number is not None and kind == "count":
            number = int(number) if float(number).is_integer() and number >= 1 else None
        elif number is not None and not (math.isfinite(number) and number >= 0
                                         and (kind != "probability" or number <= 1)):
            number = None
        if number is None:
            shown = "missing" if name not in params else f"{value!r}"
            raise BuildError(f"search policy {policy}: parameter `{name}` must be {KINDS[kind]}, not {shown}; "
                             "recompile the agent with this mlabc")
        found[name] = number
    return found


def scaled_values(tree: Tree, upto: int | None = None) -> dict[int, float]:
    """Every evaluated node's value in [0, 1]: min-max over the valid nodes, buggy nodes 0; with
    `upto`, the tree as it stood when that node was made (the nodes numbered up to it)."""
    made = [node for node in tree if upto is None or node.id <= upto]
    scores = {node.id: tree.normalised(node.validation) for node in made if node.valid}
    low, high = min(scores.values(), default=0.0), max(scores.values(), default=0.0)
    values = {}
    for node in made:
        if node.pending:
            continue
        if node.id not in scores:
            values[node.id] = 0.0
        else:
            values[node.id] = 1.0 if high == low else (scores[node.id] - low) / (high - low)
    return values


def statistics(tree: Tree, upto: int | None = None) -> dict[int, tuple[int, float]]:
    """(visits, total value) of every node's subtree, counting evaluated nodes only."""
    values = scaled_values(tree, upto)
    totals = {node.id: (1, values[node.id]) if node.id in values else (0, 0.0) for node in tree}
    for node in sorted(tree, key=lambda n: n.id, reverse=True):  # children are made after parents
        if node.parent is not None:
            visits, total = totals[node.parent]
            child_visits, child_total = totals[node.id]
            totals[node.parent] = (visits + child_visits, total + child_total)
    return totals


class MCTS(Policy):
    """UCT over the solution tree: expand a node up to `children` times, debug within the depth."""

    name = "mcts"

    def __init__(self, params: dict):
        super().__init__(params)
        found = checked_params(self.name, self.params, {"exploration": "non-negative", "children": "count",
                                                        "max_debug_depth": "count", "steps": "count"})
        self.exploration = float(found["exploration"])
        self.children, self.max_debug_depth, self.steps = found["children"], found["max_debug_depth"], found["steps"]

    def expansion(self, tree: Tree, node: Node) -> str | None:
        """The operator that expands the node now, or None when it cannot be expanded."""
        if node.pending or len(node.children) >= self.children:
            return None
        if node.valid:
            return "improve"
        return "debug" if tree.debug_depth(node) < self.max_debug_depth else None

    def open_nodes(self, tree: Tree) -> set[int]:
        """The nodes whose subtree still holds something to expand."""
        found = set()
        for node in sorted(tree, key=lambda n: n.id, reverse=True):
            if self.expansion(tree, node) or any(child in found for child in node.children):
                found.add(node.id)
        return found

    def uct(self, parent_visits: int, visits: int, total: float) -> float:
        return total / visits + self.exploration * math.sqrt(math.log(parent_visits) / visits)

    def decide(self, tree: Tree, rng: random.Random) -> Decision | None:
        """The next expansion; None after `steps` nodes, or to wait for a pending node."""
        if len(tree) >= self.steps:
            return None
        stats, open_ = statistics(tree), self.open_nodes(tree)
        roots = [node for node in tree if node.parent is None]
        if len(roots) < self.children:
            return Decision("draft", facts={"path": []})
        node: Node | None = None
        path: list[int] = []
        ucts: list[float] = []
        while True:
            if node is not None:
                operator = self.expansion(tree, node)
                if operator:
                    return Decision(operator, (node.id,), {"path": path, "uct": ucts})
            kids = roots if node is None else [tree.nodes[child] for child in node.children]
            candidates = [kid for kid in kids if kid.id in open_]
            if not candidates:  # only at the root: every branch is closed
                if tree.pending():
                    return None  # wait: a pending node may open a branch again
                return Decision("draft", facts={"path": [], "reason": "every branch is closed"})
            parent_visits = (sum(stats[kid.id][0] for kid in roots) if node is None
                             else stats[node.id][0])
            scored = [(self.uct(parent_visits, *stats[kid.id]), kid) for kid in candidates]
            best = max(scored, key=lambda pair: (pair[0], -pair[1].id))
            node = best[1]
            path.append(node.id)
            ucts.append(round(best[0], 4))

    def observe(self, tree: Tree, node: Node) -> None:
        # as the tree stood up to this node, so that the facts replay the same on resume
        stats = statistics(tree, upto=node.id)
        for step in tree.path(node):
            visits, total = stats[step.id]
            step.facts["visits"] = visits
            step.facts["value"] = round(total / visits, 4) if visits else None


POLICY = MCTS  # the policy this module defines (mlab.search.policies finds it here)
