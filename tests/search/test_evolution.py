"""Evolution on fixed trees: the seed drafts, which parents a crossover draws given the random numbers
and the scores (softmax weights computed here by hand), migration, the temperature schedule, pending
nodes, and resume in the middle of a generation."""
from __future__ import annotations

import math
import random

import pytest

from mlab.search.evolution import Evolution
from mlab.search.policies import make_policy, policy_class
from mlab.search.policy import Decision
from mlab.search.tree import Node, Tree

PARAMS = {"population": 2, "islands": 2, "crossover_probability": 0.5, "migration_probability": 0.1,
          "temperature_start": 1.0, "temperature_end": 0.1, "generations": 3}


class Scripted:
    """A random generator that returns the given numbers in turn."""

    def __init__(self, *values: float):
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


def tree_of(*rows, lower_is_better=False) -> Tree:
    """rows: (id, parent, operator, validation / None for buggy / "pending", island, generation)."""
    tree = Tree(lower_is_better)
    for id_, parent, operator, validation, island, generation in rows:
        pending = validation == "pending"
        score = None if pending else validation
        tree.add(Node(id_, parent, operator, validation=score, buggy=score is None, pending=pending,
                      facts={"island": island, "generation": generation}))
    return tree


def test_drafts_seed_every_island_in_turn():
    policy, tree = Evolution(PARAMS), Tree()
    made = []
    for number in range(1, 5):
        decision = policy.decide(tree, Scripted())  # seeds draw no random numbers
        made.append(decision)
        tree.add(Node(number, None, decision.operator, facts=dict(decision.facts), pending=True))
    assert made == [Decision("draft", facts={"island": i % 2, "generation": 0, "reason": "seed"})
                    for i in range(4)]


def test_a_crossover_draws_its_two_parents_by_softmax_over_the_scaled_scores():
    params = {**PARAMS, "islands": 1, "population": 3}
    tree = tree_of((1, None, "draft", 0.2, 0, 0), (2, None, "draft", 0.8, 0, 0), (3, None, "draft", 0.5, 0, 0))
    # generation 1, temperature 1: candidates best first 2, 3, 1 with scaled scores 1, 0.5, 0
    weights = [math.exp(0), math.exp(-0.5), math.exp(-1)]
    # migration 0.9 (one island: none), crossover 0.1 < 0.5, then the two draws
    first_draw = (weights[0] + 0.5 * weights[1]) / sum(weights)  # lands inside node 3's share
    # the second parent is drawn from 2 and 1, rescaled: scores 1 and 0
    rest = [math.exp(0), math.exp(-1)]
    second_draw = (rest[0] + 0.5 * rest[1]) / sum(rest)  # inside node 1's share
    rng = Scripted(0.9, 0.1, first_draw, second_draw)
    decision = Evolution(params).decide(tree, rng)
    assert decision == Decision("crossover", (3, 1), {"island": 0, "generation": 1, "temperature": 1.0})
    assert rng.values == []
    # the same coins below the best node's share draw it first
    below = 0.99 * weights[0] / sum(weights)
    assert Evolution(params).decide(tree, Scripted(0.9, 0.1, below, 0.0)).parents == (2, 3)
    # a crossover coin above the probability is a mutation: improve on one parent
    assert Evolution(params).decide(tree, Scripted(0.9, 0.6, below)) == Decision(
        "improve", (2,), {"island": 0, "generation": 1, "temperature": 1.0})


def test_the_temperature_follows_the_schedule_over_the_generations():
    policy = Evolution({**PARAMS, "generations": 3})
    assert [policy.temperature(g) for g in (1, 2, 3)] == [1.0, 0.55, 0.1]
    assert Evolution({**PARAMS, "generations": 5}).temperature(4) == pytest.approx(1.0 + (0.1 - 1.0) * 3 / 4)
    assert Evolution({**PARAMS, "generations": 1}).temperature(1) == 1.0
    # the same draw picks the worse of two parents when hot, the better when cold
    rows = [(1, None, "draft", 0.3, 0, 0), (2, None, "draft", 0.6, 1, 0),
            (3, None, "draft", 0.9, 0, 0), (4, None, "draft", 0.7, 1, 0)]
    hot_share = 1 / (1 + math.exp(-1 / 1.0))  # the best node's probability at temperature 1: 0.73
    cold_share = 1 / (1 + math.exp(-1 / 0.1))  # at 0.1: 0.99995
    u = (hot_share + cold_share) / 2
    tree = tree_of(*rows)
    assert policy.decide(tree, Scripted(0.9, 0.9, u)) == Decision(
        "improve", (1,), {"island": 0, "generation": 1, "temperature": 1.0})
    for number in range(5, 13):  # fill generations 1 and 2 with buggy nodes
        tree.add(Node(number, 3, "improve", buggy=True,
                      facts={"island": (number - 1) % 2, "generation": (number - 1) // 4}))
    assert policy.decide(tree, Scripted(0.9, 0.9, u)) == Decision(
        "improve", (3,), {"island": 0, "generation": 3, "temperature": 0.1})
    assert Evolution({**PARAMS, "temperature_end": 0.0}).weights(tree, [tree.nodes[3], tree.nodes[1]], 0.0) \
        == [1.0, 0.0]  # at temperature 0 the best is taken


MIGRATION_ROWS = [(1, None, "draft", 0.5, 0, 0), (2, None, "draft", 0.7, 1, 0),
                  (3, None, "draft", 0.4, 0, 0), (4, None, "draft", 0.9, 1, 0)]


def test_migration_brings_the_neighbouring_island_s_best_once_a_generation_and_improves_it():
    tree = tree_of(*MIGRATION_ROWS)
    policy = Evolution(PARAMS)
    # island 0's slot: migration coin 0.05 < 0.1, so island 1's best (4) comes over
    migrated = policy.decide(tree, Scripted(0.05, 0.9))
    assert migrated == Decision("improve", (4,), {"island": 0, "generation": 1, "temperature": 1.0,
                                                  "migration": {"from": 1, "node": 4}})
    # without the coin, island 0 chooses among its own: 1 (0.5) and 3 (0.4)
    assert policy.decide(tree, Scripted(0.5, 0.9, 0.0)).parents == (1,)
    tree.add(Node(5, 4, "improve", validation=0.6, buggy=False, facts=dict(migrated.facts)))
    assert [n.id for n in policy.members(tree, 0, 1)] == [1, 3]  # a member from generation 1 on
    assert [n.id for n in policy.members(tree, 0, 2)] == [1, 3, 4, 5]
    tree.add(Node(6, 2, "improve", validation=0.1, buggy=False, facts={"island": 1, "generation": 1}))
    # island 0's second slot of generation 1: migration happens once per island and generation,
    # so the coin 0.0 is unused and the parent is island 0's own
    assert policy.decide(tree, Scripted(0.0, 0.9, 0.0)) == Decision(
        "improve", (1,), {"island": 0, "generation": 1, "temperature": 1.0})
    for number, island in ((7, 0), (8, 1)):
        tree.add(Node(number, 1, "improve", validation=0.1, buggy=False,
                      facts={"island": island, "generation": 1}))
    # generation 2 of island 0: its best two are now the migrant 4 (0.9) and its child 5 (0.6)
    assert [n.id for n in policy.candidates(tree, 0, 2)] == [4, 5]
    assert policy.decide(tree, Scripted(0.5, 0.9, 0.0)).parents == (4,)
    # island 1's best (4) is already a member of island 0, so the next migrant is its best other: 2
    assert policy.decide(tree, Scripted(0.05, 0.9)).facts["migration"] == {"from": 1, "node": 2}
    # one island: the migration coin is drawn and ignored
    single = Evolution({**PARAMS, "islands": 1})
    assert "migration" not in single.decide(tree_of(*MIGRATION_ROWS[:2]), Scripted(0.0, 0.9, 0.0)).facts


def test_pending_nodes_count_as_made_and_a_generation_waits_for_the_earlier_ones():
    params = {**PARAMS, "islands": 1}
    tree = tree_of((1, None, "draft", 0.3, 0, 0), (2, None, "draft", "pending", 0, 0))
    # slot 3 is generation 1, but seed 2 is still pending: wait for it (the engine asks again)
    assert Evolution(params).decide(tree, Scripted(0.9, 0.0, 0.5)) is None
    tree.nodes[2].pending, tree.nodes[2].validation, tree.nodes[2].buggy = False, 0.9, False
    assert Evolution(params).decide(tree, Scripted(0.9, 0.0, 0.0, 0.0)).parents == (2, 1)
    tree.add(Node(3, 2, "crossover", second_parent=1, pending=True, facts={"island": 0, "generation": 1}))
    # a pending node of the same generation is no reason to wait, and never a parent
    decision = Evolution(params).decide(tree, Scripted(0.9, 0.9, 0.0))
    assert decision == Decision("improve", (2,), {"island": 0, "generation": 1, "temperature": 1.0})
    tree.add(Node(4, 2, "improve", validation=0.95, buggy=False, facts={"island": 0, "generation": 1}))
    assert Evolution(params).decide(tree, Scripted()) is None  # generation 2 waits for node 3
    tree.nodes[3].pending, tree.nodes[3].validation, tree.nodes[3].buggy = False, 0.1, False
    assert Evolution(params).decide(tree, Scripted(0.9, 0.9, 0.0)).parents == (4,)


def test_an_island_without_a_valid_node_drafts_again_and_the_policy_stops_after_its_generations():
    tree = tree_of((1, None, "draft", None, 0, 0), (2, None, "draft", 0.5, 1, 0),
                   (3, None, "draft", None, 0, 0), (4, None, "draft", 0.6, 1, 0))
    assert Evolution(PARAMS).decide(tree, Scripted(0.9, 0.9)) == Decision(
        "draft", facts={"island": 0, "generation": 1, "temperature": 1.0,
                        "reason": "no valid node on the island"})
    short = Evolution({**PARAMS, "generations": 1})
    for number in range(5, 9):
        tree.add(Node(number, 2, "improve", validation=0.5, buggy=False,
                      facts={"island": (number - 1) % 2, "generation": 1}))
    assert short.decide(tree, Scripted()) is None  # 2 islands x 2 x (1 + 1 generations) = 8 nodes


def test_lower_is_better_selects_the_lowest_scores():
    tree = tree_of(*MIGRATION_ROWS, lower_is_better=True)
    assert Evolution(PARAMS).candidates(tree, 0, 1) == [tree.nodes[3], tree.nodes[1]]
    assert Evolution(PARAMS).decide(tree, Scripted(0.05, 0.9)).facts["migration"]["node"] == 2


def score(node_id: int) -> float | None:
    """A fixed scoring of node numbers: every fifth node buggy."""
    return None if node_id % 5 == 0 else (node_id * 37 % 11) / 10


def grow(policy, tree: Tree, count: int, seed: int = 3) -> list[Decision]:
    """Make and evaluate up to `count` nodes as the engine does (one generator per node number)."""
    decisions = []
    for _ in range(count):
        number = tree.next_id()
        decision = policy.decide(tree, random.Random(f"{seed}:{number}"))
        if decision is None:
            break
        decisions.append(decision)
        parents = decision.parents + (None, None)
        validation = score(number)
        node = tree.add(Node(number, parents[0], decision.operator, validation=validation,
                             buggy=validation is None, second_parent=parents[1], facts=dict(decision.facts)))
        policy.observe(tree, node)
    return decisions


def test_resume_in_the_middle_of_a_generation_decides_as_the_uninterrupted_run():
    params = {**PARAMS, "population": 3, "migration_probability": 0.6}
    uninterrupted = grow(Evolution(params), Tree(), 100)
    assert len(uninterrupted) == 2 * 3 * 4  # islands x population x (seeds + 3 generations)
    assert {d.operator for d in uninterrupted} == {"draft", "improve", "crossover"}
    assert any("migration" in d.facts for d in uninterrupted)
    half = Tree()
    first = grow(Evolution(params), half, 15)  # generation 2 runs from node 13 to 18
    assert first[-1].facts["generation"] == 2
    again, policy = Tree(), Evolution(params)  # rebuilt from the recorded nodes, observe replayed
    for node in half:
        again.add(Node(node.id, node.parent, node.operator, validation=node.validation, buggy=node.buggy,
                       second_parent=node.second_parent, facts=dict(node.facts)))
        policy.observe(again, again.nodes[node.id])
    assert first + grow(policy, again, 100) == uninterrupted


def test_evolution_is_found_by_name_with_the_crossover_operator():
    assert policy_class("evolution") is Evolution and "crossover" in Evolution.operators
    policy = make_policy("evolution", PARAMS)
    assert (policy.islands, policy.population, policy.generations) == (2, 2, 3)


def test_a_probability_out_of_range_is_a_build_error_naming_it():
    from mlab.errors import BuildError

    with pytest.raises(BuildError, match=r"search policy evolution: parameter `crossover_probability` must be "
                                         r"a number from 0 to 1, not 1.5"):
        Evolution({**PARAMS, "crossover_probability": 1.5})
    assert Evolution({**PARAMS, "islands": 3.0}).islands == 3  # a count written 3.0 in JSON is 3
