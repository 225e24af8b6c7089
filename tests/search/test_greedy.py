"""AIDE's greedy rule on fixed trees: when it drafts, which buggy leaf it debugs, what it improves."""
from __future__ import annotations

import random

import pytest

from mlab.search.policies import POLICY_MODULES, make_policy, policy_class
from mlab.search.policy import Decision, Greedy
from mlab.search.tree import Node, Tree

AIDE = {"drafts": 5, "debug_probability": 0.5, "max_debug_depth": 3}


def tree_of(*rows, lower_is_better=False) -> Tree:
    """rows: (id, parent, operator, validation or None for buggy)."""
    tree = Tree(lower_is_better)
    for id_, parent, operator, validation in rows:
        tree.add(Node(id_, parent, operator, validation=validation, buggy=validation is None))
    return tree


class Always:
    """A random generator whose random() is fixed; choice picks the first."""

    def __init__(self, value: float):
        self.value = value

    def random(self) -> float:
        return self.value

    def choice(self, seq):
        return seq[0]


def test_drafts_until_the_declared_number_of_drafts_exists():
    policy = Greedy(AIDE)
    tree = Tree()
    for id_ in range(1, 6):
        assert policy.decide(tree, random.Random(id_)).operator == "draft"
        tree.add(Node(id_, None, "draft", validation=0.5, buggy=False))
    assert policy.decide(tree, Always(0.9)) == Decision("improve", (1,), {"reason": "improve the best node"})


def test_pending_drafts_count_so_parallel_evaluations_do_not_overdraft():
    tree = tree_of((1, None, "draft", 0.4))
    tree.add(Node(2, None, "draft", pending=True))
    policy = Greedy({**AIDE, "drafts": 2})
    assert policy.decide(tree, Always(0.9)).operator == "improve"


def test_improves_the_best_valid_node_in_the_metric_direction():
    rows = [(1, None, "draft", 0.7), (2, None, "draft", 0.9), (3, None, "draft", None),
            (4, 1, "improve", 0.8)]
    policy = Greedy({**AIDE, "drafts": 3})
    assert policy.decide(tree_of(*rows), Always(0.9)).parents == (2,)
    assert policy.decide(tree_of(*rows, lower_is_better=True), Always(0.9)).parents == (1,)


def test_debugs_a_buggy_leaf_when_the_coin_says_debug():
    tree = tree_of((1, None, "draft", 0.7), (2, None, "draft", None), (3, None, "draft", None),
                   (4, 3, "debug", None))
    decision = Greedy({**AIDE, "drafts": 3}).decide(tree, Always(0.1))
    # 3 has a child, so the buggy leaves are 2 and 4
    assert decision.operator == "debug" and decision.parents == (2,)
    chosen = {Greedy({**AIDE, "drafts": 3}).decide(tree, random.Random(seed)).parents
              for seed in range(40)}
    assert chosen == {(1,), (2,), (4,)}  # improve 1, or debug one of the two leaves


def test_a_leaf_at_the_debug_depth_limit_is_not_debugged():
    # 2 ← 3 ← 4: the chain 3, 4 is two debugs deep
    tree = tree_of((1, None, "draft", 0.6), (2, None, "draft", None), (3, 2, "debug", None),
                   (4, 3, "debug", None))
    assert tree.debug_depth(tree.nodes[4]) == 2 and tree.debug_depth(tree.nodes[2]) == 0
    deep = Greedy({"drafts": 2, "debug_probability": 1.0, "max_debug_depth": 2})
    assert deep.decide(tree, random.Random(0)) == Decision("improve", (1,), {"reason": "improve the best node"})
    allowed = Greedy({"drafts": 2, "debug_probability": 1.0, "max_debug_depth": 3})
    assert allowed.decide(tree, random.Random(0)).parents == (4,)


def test_debug_depth_restarts_after_an_improve():
    tree = tree_of((1, None, "draft", None), (2, 1, "debug", 0.5), (3, 2, "improve", None),
                   (4, 3, "debug", None))
    assert tree.debug_depth(tree.nodes[4]) == 1


def test_drafts_again_when_no_node_is_valid_and_nothing_can_be_debugged():
    tree = tree_of((1, None, "draft", None), (2, 1, "debug", None))
    policy = Greedy({"drafts": 1, "debug_probability": 0.5, "max_debug_depth": 1})
    assert policy.decide(tree, Always(0.1)).operator == "draft"  # 2 is at the limit
    assert policy.decide(tree, Always(0.9)).operator == "draft"  # no valid node to improve


def test_a_buggy_node_is_never_improved_or_submitted_even_with_a_better_score():
    tree = Tree()
    tree.add(Node(1, None, "draft", validation=0.5, buggy=False))
    tree.add(Node(2, None, "draft", validation=0.99, buggy=True))  # scored but its submission failed
    tree.add(Node(3, None, "draft", validation=0.98, pending=True, buggy=False))
    assert [node.id for node in tree.best(3)] == [1]
    policy = Greedy({**AIDE, "drafts": 2, "debug_probability": 0.0})
    assert all(policy.decide(tree, random.Random(s)).parents == (1,) for s in range(20))


# Decisions recorded once for nodes 6..17 with seed 7 and checked by hand: the first draw of
# random.Random("7:<node>") is below debug_probability 0.5 exactly for nodes 7 (0.008), 10 (0.474),
# 12 (0.429), 15 (0.330), 16 (0.192) and 17 (0.457), which debug a buggy leaf (1, 3 or 5, the
# second draw's choice); every other node improves node 4, the best valid one (0.4 > 0.2).
RECORDED = [("improve", (4,)), ("debug", (5,)), ("improve", (4,)), ("improve", (4,)), ("debug", (1,)),
            ("improve", (4,)), ("debug", (5,)), ("improve", (4,)), ("improve", (4,)), ("debug", (3,)),
            ("debug", (3,)), ("debug", (5,))]


def test_the_same_seed_and_node_number_decide_as_recorded():
    tree = tree_of(*[(i, None, "draft", None if i % 2 else 0.1 * i) for i in range(1, 6)])
    policy = Greedy(AIDE)
    decided = [policy.decide(tree, random.Random(f"7:{n}")) for n in range(6, 18)]
    assert [(d.operator, d.parents) for d in decided] == RECORDED
    assert decided == [Greedy(AIDE).decide(tree, random.Random(f"7:{n}")) for n in range(6, 18)]  # a fresh policy too


def test_policies_are_found_by_name():
    from mlabc.lower.search import POLICIES  # the compiler's table of policies and their parameters

    assert set(POLICY_MODULES) == set(POLICIES) and policy_class("greedy") is Greedy
    assert policy_class("mcts").__name__ == "MCTS" and policy_class("evolution").__name__ == "Evolution"
    assert make_policy("greedy", AIDE).drafts == 5
    with pytest.raises(KeyError, match="unknown search policy 'beam'"):
        policy_class("beam")


def test_a_node_cannot_name_a_parent_the_tree_lacks():
    with pytest.raises(ValueError, match="parent 9"):
        Tree().add(Node(1, 9, "improve"))
