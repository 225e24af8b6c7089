"""The search tree: the nodes a tree-search run has made, and the questions policies ask of it.

A node is one candidate solution: the operator that made it, its plan and code, the output of its
script and its validation score. The tree knows the metric's direction, so that policies compare
nodes with `normalised` (higher is better) and never need to know whether the task minimises.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    """One candidate solution; `buggy` until its evaluation proves it valid."""
    id: int
    parent: int | None
    operator: str  # draft | improve | debug | crossover
    plan: str = ""
    code: str = ""
    output: str = ""
    validation: float | None = None
    buggy: bool = True
    holdout: float | None = None
    second_parent: int | None = None  # crossover
    facts: dict = field(default_factory=dict)  # policy facts (island, generation, visits...)
    children: list[int] = field(default_factory=list)
    pending: bool = False  # made, evaluation not finished (parallel)

    @property
    def valid(self) -> bool:
        """Evaluated, not buggy, with a validation score."""
        return not self.pending and not self.buggy and self.validation is not None


class Tree:
    """The nodes by id (creation order) and the metric's direction."""

    def __init__(self, lower_is_better: bool = False):
        self.nodes: dict[int, Node] = {}
        self.lower_is_better = lower_is_better

    def add(self, node: Node) -> Node:
        """Add a node and link it under its parent (and second parent, for a crossover)."""
        if node.id in self.nodes:
            raise ValueError(f"node {node.id} is already in the tree")
        for parent in (node.parent, node.second_parent):
            if parent is not None and parent not in self.nodes:
                raise ValueError(f"node {node.id} names a parent {parent} that is not in the tree")
        self.nodes[node.id] = node
        if node.parent is not None:
            self.nodes[node.parent].children.append(node.id)
        return node

    def next_id(self) -> int:
        """The number the next node gets: the smallest one not taken."""
        number = 1
        while number in self.nodes:
            number += 1
        return number

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes.values())

    def drafts(self) -> list[Node]:
        """Every draft, evaluated or pending."""
        return [node for node in self if node.operator == "draft"]

    def pending(self) -> list[Node]:
        return [node for node in self if node.pending]

    def valid(self) -> list[Node]:
        return [node for node in self if node.valid]

    def buggy(self) -> list[Node]:
        """Evaluated nodes that are not valid."""
        return [node for node in self if not node.pending and not node.valid]

    def buggy_leaves(self) -> list[Node]:
        """Evaluated buggy nodes with no child yet (a pending child counts: it is being worked on)."""
        return [node for node in self.buggy() if not node.children]

    def best(self, n: int = 1) -> list[Node]:
        """The n best valid nodes, best first; equal scores go to the earlier node."""
        ranked = sorted(self.valid(), key=lambda node: (-self.normalised(node.validation), node.id))
        return ranked[:n]

    def debug_depth(self, node: Node) -> int:
        """How many debug operators in a row end at this node (0 for a node not made by debug)."""
        depth = 0
        while node.operator == "debug":
            depth += 1
            if node.parent is None:
                break
            node = self.nodes[node.parent]
        return depth

    def normalised(self, score: float) -> float:
        """The score with higher better whatever the metric's direction."""
        return -score if self.lower_is_better else score

    def path(self, node: Node) -> list[Node]:
        """The node's ancestors from its root down to the node itself."""
        chain = [node]
        while chain[-1].parent is not None:
            chain.append(self.nodes[chain[-1].parent])
        return chain[::-1]


HOLDOUT_CANDIDATES = 3  # the best valid nodes by validation that the holdout chooses among


def choose_submitted(tree: Tree, select: str = "validation") -> tuple[Node | None, str]:
    """The node a search submits and what chose it ("validation" or "holdout"): the best valid
    node by validation score, or, with `select holdout`, the best by the harness's holdout score
    among the best few by validation (earlier nodes win ties). The engine submits by this rule at
    the end of a search, and budget scoring asks it of the nodes finished by each budget."""
    if select == "holdout":
        candidates = [n for n in tree.best(HOLDOUT_CANDIDATES) if n.holdout is not None]
        if candidates:
            best = max(candidates, key=lambda n: (tree.normalised(n.holdout), -n.id))
            return best, "holdout"
    best = tree.best(1)
    return (best[0] if best else None), "validation"
