"""What a run's model calls have spent, and the budget every call is checked against before it is made."""
from __future__ import annotations

from dataclasses import dataclass, field

from mlab.models.errors import BudgetSpent


@dataclass
class Usage:
    """Tokens and cost of a run's model calls so far, per tier; cost is None once any call had no price."""

    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    cost: float | None = 0.0
    calls: int = 0

    @classmethod
    def from_records(cls, records: list[dict]) -> "Usage":
        """Summed over every model call recorded in a trace."""
        usage = cls()
        for record in records:
            for call in (record.get("model") or {}).get("calls", []):
                usage.add(call)
        return usage

    def add(self, call: dict) -> None:
        tier = self.tokens.setdefault(call.get("tier", "main"), {"prompt": 0, "completion": 0, "cached": 0})
        tier["prompt"] += call.get("prompt_tokens", 0)
        tier["completion"] += call.get("completion_tokens", 0)
        tier["cached"] += call.get("cached_tokens", 0)
        self.calls += 1
        self.cost = None if self.cost is None or call.get("cost") is None else self.cost + call["cost"]

    @property
    def total_tokens(self) -> int:
        return sum(t["prompt"] + t["completion"] for t in self.tokens.values())


@dataclass
class Budget:
    """A run's token, cost and call limits and what its calls have spent (from the trace on resume,
    then each call as it is made): a call past them raises BudgetSpent instead of being made."""

    tokens: int | None = None
    cost: float | None = None
    spent: Usage = field(default_factory=Usage)
    calls: int | None = None

    def reached(self) -> str | None:
        """'tokens', 'cost' or 'calls' once that limit is spent."""
        return limit_spent(self.spent, self.tokens, self.cost, self.calls)

    def check(self) -> None:
        limit = self.reached()
        if limit:
            raise BudgetSpent(limit)


def limit_spent(usage: Usage, tokens: int | None, cost: float | None, calls: int | None) -> str | None:
    """'tokens', 'cost' or 'calls': the first of a run's model limits that `usage` has spent."""
    if tokens is not None and usage.total_tokens >= tokens:
        return "tokens"
    if cost is not None and usage.cost is not None and usage.cost >= cost:
        return "cost"
    if calls is not None and usage.calls >= calls:
        return "calls"
    return None
