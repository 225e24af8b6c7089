"""An island-model evolutionary search over candidate solutions (islands after Whitley et al., 1999;
the solution-level operators of aira-dojo's evolutionary policy and of AlphaEvolve).

Nodes are made in slots, in order: slot k (0-based, counting pending nodes) belongs to
generation k // (islands * population) and to island k % islands, so the islands take turns and
parallel evaluations spread over them. Generation 0 seeds every island with `population` drafts.
Each later generation g (1 to `generations`) makes `population` children per island; one
decision draws, from its own random generator and in this order:

1. u = random(): at the island's first slot of the generation, below `migration_probability`
   (and with more than one island), the best valid node of the neighbouring island (island - 1,
   in a ring) that is not already a member migrates: it joins this island (a member from the next
   generation on), and this slot improves it. At the island's other slots the number is unused.
2. u = random(): below `crossover_probability`, with two parents or more to choose from, a
   `crossover` of two parents (the second drawn from the rest); otherwise a mutation, `improve`
   on one parent.
3. Each parent is drawn by a softmax over the candidates' scores: the island's members from
   earlier generations that are valid, the `population` best of them, their scores in the metric's
   direction scaled to [0, 1] by min-max over those candidates (1 for all when they are equal),
   weighted exp(score / temperature); the draw takes the first candidate (best first) at which
   the running weight passes random() times the total. The temperature goes linearly from
   `temperature_start` in generation 1 to `temperature_end` in the last; at 0 the best is taken.

A slot of generation g waits (None) while a node of an earlier generation is pending, so a run with
parallel evaluations chooses the same parents as one without: the generation is the barrier, and
up to islands * population nodes of one generation are evaluated at once. An island with no valid
candidate drafts again. The policy stops after generation `generations`.
Every node's facts name its island, generation and temperature, and a migration's source island
and node. A decision reads only the tree, so a resumed run decides as the uninterrupted one.
"""
from __future__ import annotations

import math
import random

from mlab.search.mcts import checked_params
from mlab.search.policy import Decision, Policy
from mlab.search.tree import Node, Tree


class Evolution(Policy):
    """Islands of `population`, softmax selection on a temperature schedule, crossover and migration."""

    name = "evolution"
    operators = ("draft", "improve", "debug", "crossover")

    def __init__(self, params: dict):
        super().__init__(params)
        found = checked_params(self.name, self.params, {
            "population": "count", "islands": "count", "crossover_probability": "probability",
            "migration_probability": "probability", "temperature_start": "non-negative",
            "temperature_end": "non-negative", "generations": "count"})
        self.population, self.islands, self.generations = found["population"], found["islands"], found["generations"]
        self.crossover_probability = float(found["crossover_probability"])
        self.migration_probability = float(found["migration_probability"])
        self.temperature_start, self.temperature_end = float(found["temperature_start"]), float(found["temperature_end"])

    def slot(self, k: int) -> tuple[int, int]:
        """(generation, island) of the k-th node made (0-based)."""
        generation, within = divmod(k, self.islands * self.population)
        return generation, within % self.islands

    def temperature(self, generation: int) -> float:
        """The selection temperature of a generation (1 to `generations`)."""
        if self.generations <= 1:
            return self.temperature_start
        share = (generation - 1) / (self.generations - 1)
        return self.temperature_start * (1 - share) + self.temperature_end * share  # exact at both ends

    def members(self, tree: Tree, island: int, generation: int) -> list[Node]:
        """The island's nodes made before `generation`, and the migrants it took in before it."""
        found: dict[int, Node] = {}
        for node in tree:
            if node.facts.get("island") != island or node.facts.get("generation", generation) >= generation:
                continue
            found[node.id] = node
            migrant = (node.facts.get("migration") or {}).get("node")
            if migrant in tree.nodes:
                found[migrant] = tree.nodes[migrant]
        return sorted(found.values(), key=lambda n: n.id)

    def candidates(self, tree: Tree, island: int, generation: int) -> list[Node]:
        """The island's `population` best valid members, best first (equal scores: earlier first)."""
        valid = [node for node in self.members(tree, island, generation) if node.valid]
        valid.sort(key=lambda n: (-tree.normalised(n.validation), n.id))
        return valid[: self.population]

    def weights(self, tree: Tree, candidates: list[Node], temperature: float) -> list[float]:
        """Softmax weights of the candidates' min-max scaled scores at the temperature."""
        scores = [tree.normalised(node.validation) for node in candidates]
        low, high = min(scores), max(scores)
        scaled = [1.0 if high == low else (s - low) / (high - low) for s in scores]
        if temperature <= 0:
            return [1.0 if s == max(scaled) else 0.0 for s in scaled]
        return [math.exp((s - 1.0) / temperature) for s in scaled]  # shifted by the best: no overflow

    def draw(self, tree: Tree, candidates: list[Node], temperature: float, rng: random.Random) -> Node:
        weights = self.weights(tree, candidates, temperature)
        target, running = rng.random() * sum(weights), 0.0
        for node, weight in zip(candidates, weights):
            running += weight
            if running > target:
                return node
        return candidates[-1]

    def decide(self, tree: Tree, rng: random.Random) -> Decision | None:
        """The next slot's node; None after the last generation, or to wait for a pending one."""
        generation, island = self.slot(len(tree))
        facts = {"island": island, "generation": generation}
        if generation > self.generations:
            return None
        if generation == 0:
            return Decision("draft", facts={**facts, "reason": "seed"})
        if any(node.pending and node.facts.get("generation", 0) < generation for node in tree):
            return None  # wait for the earlier generations, so parallel runs choose as sequential ones
        temperature = self.temperature(generation)
        facts["temperature"] = round(temperature, 6)
        migrates, crosses = rng.random(), rng.random()
        candidates = self.candidates(tree, island, generation)
        first_slot = len(tree) % (self.islands * self.population) < self.islands
        if first_slot and migrates < self.migration_probability and self.islands > 1:
            source = (island - 1) % self.islands
            ids = {node.id for node in self.members(tree, island, generation)}
            incoming = [node for node in self.candidates(tree, source, generation) if node.id not in ids]
            if incoming:
                migrant = incoming[0]
                return Decision("improve", (migrant.id,),
                                {**facts, "migration": {"from": source, "node": migrant.id}})
        if not candidates:
            return Decision("draft", facts={**facts, "reason": "no valid node on the island"})
        first = self.draw(tree, candidates, temperature, rng)
        rest = [node for node in candidates if node.id != first.id]
        if crosses < self.crossover_probability and rest:
            second = self.draw(tree, rest, temperature, rng)
            return Decision("crossover", (first.id, second.id), facts)
        return Decision("improve", (first.id,), facts)


POLICY = Evolution  # the policy this module defines (mlab.search.policies finds it here)
