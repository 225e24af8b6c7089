"""MCTS on fixed trees: which node UCT expands given known scores (computed here by hand), debugging
within the depth, pending nodes, the [0, 1] scaling of scores, the step limit and resume."""
from __future__ import annotations

import math
import random

import pytest

from mlab.search.mcts import MCTS, scaled_values, statistics
from mlab.search.policies import make_policy, policy_class
from mlab.search.policy import Decision
from mlab.search.tree import Node, Tree

PARAMS = {"exploration": 1.414, "children": 3, "max_debug_depth": 3, "steps": 20}


def tree_of(*rows, lower_is_better=False) -> Tree:
    """rows: (id, parent, operator, validation or None for buggy, or "pending")."""
    tree = Tree(lower_is_better)
    for id_, parent, operator, validation in rows:
        pending = validation == "pending"
        score = None if pending else validation
        tree.add(Node(id_, parent, operator, validation=score, buggy=score is None, pending=pending))
    return tree


# drafts 1 (0.5), 2 (0.9), 3 (buggy); 2 is full with improvements 4 (0.7), 5 (0.8), 6 (0.6)
FULL_DRAFT = [(1, None, "draft", 0.5), (2, None, "draft", 0.9), (3, None, "draft", None),
              (4, 2, "improve", 0.7), (5, 2, "improve", 0.8), (6, 2, "improve", 0.6)]


def test_uct_picks_the_child_with_the_highest_value_plus_exploration():
    tree = tree_of((1, None, "draft", 0.6), (2, None, "draft", 0.9), (3, None, "draft", None),
                   (4, 1, "improve", 0.8))
    # values scaled over the valid scores 0.6..0.9: 1 → 0, 2 → 1, 4 → 2/3, buggy 3 → 0
    # visits: 1 → 2 (itself and 4), 2 → 1, 3 → 1, the root → 4
    c = 1.414
    uct = {1: (0 + 2 / 3) / 2 + c * math.sqrt(math.log(4) / 2),
           2: 1 / 1 + c * math.sqrt(math.log(4) / 1),
           3: 0 / 1 + c * math.sqrt(math.log(4) / 1)}
    assert max(uct, key=uct.get) == 2
    decision = MCTS(PARAMS).decide(tree, random.Random(0))
    assert decision == Decision("improve", (2,), {"path": [2], "uct": [round(uct[2], 4)]})


def test_the_exploration_constant_trades_a_good_subtree_for_unvisited_branches():
    tree = tree_of(*FULL_DRAFT)
    # scaled over 0.5..0.9: 1 → 0, 2 → 1, 4 → 0.5, 5 → 0.75, 6 → 0.25, buggy 3 → 0
    # visits: 2 → 4 (value 2.5), 1 → 1, 3 → 1, the root → 6
    greedy = MCTS({**PARAMS, "exploration": 0.0}).decide(tree, random.Random(0))
    # Q(2) = 0.625 beats Q(1) = Q(3) = 0; inside 2 (full) the best child is 5 (0.75), not full
    assert greedy == Decision("improve", (5,), {"path": [2, 5], "uct": [0.625, 0.75]})
    c = 1.414
    uct2 = 2.5 / 4 + c * math.sqrt(math.log(6) / 4)
    uct1 = uct3 = 0 + c * math.sqrt(math.log(6) / 1)
    assert uct1 > uct2  # the two branches visited once win; equal values go to the earlier node
    explore = MCTS(PARAMS).decide(tree, random.Random(0))
    assert explore == Decision("improve", (1,), {"path": [1], "uct": [round(uct1, 4)]})


def test_the_value_follows_the_metric_direction():
    tree = tree_of(*FULL_DRAFT, lower_is_better=True)
    # lower is better: 1 (0.5) is now the best node, 2 (0.9) the worst
    assert scaled_values(tree) == pytest.approx({1: 1.0, 2: 0.0, 3: 0.0, 4: 0.5, 5: 0.25, 6: 0.75})
    assert MCTS({**PARAMS, "exploration": 0.0}).decide(tree, random.Random(0)).parents == (1,)


def test_scores_are_scaled_by_min_max_over_the_valid_nodes_so_far_and_buggy_is_worst():
    tree = tree_of((1, None, "draft", 0.2), (2, None, "draft", 0.4), (3, 1, "improve", 0.3),
                   (4, 1, "debug", None), (5, 2, "improve", "pending"))
    assert scaled_values(tree) == pytest.approx({1: 0.0, 2: 1.0, 3: 0.5, 4: 0.0})  # pending 5: none
    assert statistics(tree)[1] == pytest.approx((3, 0.5)) and statistics(tree)[2] == (1, 1.0)
    assert scaled_values(tree, upto=1) == {1: 1.0}  # the tree so far when node 1 was made
    same = tree_of((1, None, "draft", 0.7), (2, None, "draft", 0.7), (3, None, "draft", None))
    assert scaled_values(same) == {1: 1.0, 2: 1.0, 3: 0.0}  # equal scores: all as good as the best
    policy = MCTS(PARAMS)
    policy.observe(tree, tree.nodes[3])  # the path 1, 3 as the tree stood at node 3
    assert tree.nodes[3].facts == {"visits": 1, "value": 0.5}
    assert tree.nodes[1].facts == {"visits": 2, "value": 0.25}
    policy.observe(tree, tree.nodes[4])  # buggy 4 backs up the worst value, 0
    assert tree.nodes[4].facts == {"visits": 1, "value": 0.0}
    assert tree.nodes[1].facts == {"visits": 3, "value": round(0.5 / 3, 4)}
    assert tree.nodes[2].facts == {}  # not on an observed node's path


def test_a_buggy_node_is_debugged_within_the_depth_and_a_dead_branch_is_closed():
    # one draft per root (children 1): 1 buggy ← 2 debug, buggy (debug depth 1)
    tree = tree_of((1, None, "draft", None), (2, 1, "debug", None))
    deeper = MCTS({**PARAMS, "children": 1, "max_debug_depth": 2})
    # the root has 2 visits (1 and 2), node 1 too, node 2 one; every value is 0 (buggy)
    uct = [1.414 * math.sqrt(math.log(2) / 2), 1.414 * math.sqrt(math.log(2) / 1)]
    assert deeper.decide(tree, random.Random(0)) == Decision(
        "debug", (2,), {"path": [1, 2], "uct": [round(u, 4) for u in uct]})
    limit = MCTS({**PARAMS, "children": 1, "max_debug_depth": 1})
    assert limit.decide(tree, random.Random(0)) == Decision(
        "draft", facts={"path": [], "reason": "every branch is closed"})


def test_the_policy_waits_while_every_branch_is_closed_by_pending_nodes():
    tree = tree_of((1, None, "draft", "pending"), (2, None, "draft", 0.5), (3, 2, "improve", "pending"))
    policy = MCTS({**PARAMS, "children": 1})
    assert policy.decide(tree, random.Random(0)) is None  # the engine asks again when one is done
    tree.nodes[3].pending, tree.nodes[3].validation, tree.nodes[3].buggy = False, 0.7, False
    assert policy.decide(tree, random.Random(0)).parents == (3,)


def test_drafts_until_the_root_has_its_children():
    policy = MCTS(PARAMS)
    tree = tree_of((1, None, "draft", 0.5), (2, None, "draft", "pending"))
    assert policy.decide(tree, random.Random(0)).operator == "draft"
    tree.add(Node(3, None, "draft", validation=0.4, buggy=False))
    assert policy.decide(tree, random.Random(0)).operator == "improve"


def test_pending_children_count_as_made_and_are_never_walked_into():
    policy = MCTS({**PARAMS, "children": 2})
    tree = tree_of((1, None, "draft", 0.5), (2, 1, "improve", "pending"), (3, None, "draft", 0.4))
    # 1 (value 1, one visit) beats 3 (value 0); it has one child of two, so it is expanded again
    assert policy.decide(tree, random.Random(0)).parents == (1,)
    tree.add(Node(4, 1, "improve", pending=True))
    # 1 is now full and both its children are pending: its branch is closed for now, 3 is next
    assert policy.decide(tree, random.Random(0)) == Decision(
        "improve", (3,), {"path": [3], "uct": [round(1.414 * math.sqrt(math.log(2)), 4)]})


def test_the_policy_stops_after_its_steps():
    tree = tree_of((1, None, "draft", 0.5), (2, None, "draft", 0.6), (3, 1, "improve", "pending"))
    assert MCTS({**PARAMS, "steps": 3}).decide(tree, random.Random(0)) is None
    assert MCTS({**PARAMS, "steps": 4}).decide(tree, random.Random(0)) is not None


def score(node_id: int) -> float | None:
    """A fixed scoring of node numbers: every third node buggy."""
    return None if node_id % 3 == 0 else (node_id * 37 % 11) / 10


def grow(policy, tree: Tree, count: int, seed: int = 7) -> list[Decision]:
    """Make and evaluate up to `count` nodes as the engine does (one generator per node number)."""
    decisions = []
    for _ in range(count):
        number = tree.next_id()
        decision = policy.decide(tree, random.Random(f"{seed}:{number}"))
        if decision is None:
            break
        decisions.append(decision)
        validation = score(number)
        node = tree.add(Node(number, decision.parents[0] if decision.parents else None, decision.operator,
                             validation=validation, buggy=validation is None, facts=dict(decision.facts)))
        policy.observe(tree, node)
    return decisions


def rebuilt(tree: Tree) -> Tree:
    """The tree as a resumed run reads it back: nodes in order, facts as recorded."""
    again = Tree(tree.lower_is_better)
    for node in tree:
        again.add(Node(node.id, node.parent, node.operator, validation=node.validation,
                       buggy=node.buggy, second_parent=node.second_parent, facts=dict(node.facts)))
    return again


def test_a_whole_run_respects_the_operators_rules_and_the_step_limit():
    tree = Tree()
    decisions = grow(MCTS({**PARAMS, "steps": 16}), tree, 40)
    assert len(tree) == 16 and {d.operator for d in decisions} == {"draft", "improve", "debug"}
    for node in tree:
        parent = tree.nodes.get(node.parent)
        if node.operator == "improve":
            assert parent.valid
        if node.operator == "debug":
            assert not parent.valid and tree.debug_depth(parent) < 3
        assert len(node.children) <= 3
    assert tree.nodes[1].facts["visits"] == 1 + sum(  # the backed-up visits of a draft's subtree
        1 for node in tree if node.id != 1 and tree.path(node)[0].id == 1)


def test_resume_rebuilds_the_visits_and_decides_as_the_uninterrupted_run():
    whole = Tree()
    uninterrupted = grow(MCTS(PARAMS), whole, 20)
    half = Tree()
    first = grow(MCTS(PARAMS), half, 9)
    again, policy = rebuilt(half), MCTS(PARAMS)
    for node in again:  # observe replayed over the nodes in order, as the engine does on resume
        policy.observe(again, node)
    assert [n.facts for n in again] == [n.facts for n in half]
    assert first + grow(policy, again, 11) == uninterrupted
    assert [n.facts for n in again] == [n.facts for n in whole]


def test_mcts_is_found_by_name_with_the_compiled_parameters():
    assert policy_class("mcts") is MCTS
    policy = make_policy("mcts", PARAMS)
    assert (policy.exploration, policy.children, policy.max_debug_depth, policy.steps) == (1.414, 3, 3, 20)


def test_a_missing_or_out_of_range_parameter_is_a_build_error_naming_it():
    from mlab.errors import BuildError

    with pytest.raises(BuildError, match=r"search policy mcts: parameter `children` must be a whole number "
                                         r"of at least 1, not 0; recompile"):
        MCTS({**PARAMS, "children": 0})
    with pytest.raises(BuildError, match="parameter `steps` must be a whole number of at least 1, not missing"):
        MCTS({k: v for k, v in PARAMS.items() if k != "steps"})
    with pytest.raises(BuildError, match="parameter `exploration` must be a number of at least 0, not 'big'"):
        MCTS({**PARAMS, "exploration": "big"})
