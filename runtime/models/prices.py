"""Model prices from litellm's bundled price map, with cached-input and cache-write rates.

A provider bills a prompt in up to three parts: tokens served from its prompt cache (the
map's `cache_read_input_token_cost`), tokens written to the cache (`cache_creation_input_token_cost`,
Anthropic's cache writes) and the rest at `input_cost_per_token`; completion tokens at
`output_cost_per_token`. Where the map has no cache rate, those tokens are priced as input.
A model missing from the map has no price (`None`): its cost is unknown, never $0. Offline
models (`mlab/...`) make no paid call and cost exactly 0.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

OFFLINE_PREFIX = "mlab/"


@dataclass(frozen=True)
class Price:
    """Dollars per token; cache rates None when the map has none (priced as input)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, prompt: int, completion: int, cached: int = 0, cache_write: int = 0) -> float:
        """What a call costs: `prompt` tokens in all, of which `cached` came from the cache and
        `cache_write` were written to it, and `completion` tokens."""
        cached, cache_write = max(int(cached), 0), max(int(cache_write), 0)
        plain = max(int(prompt) - cached - cache_write, 0)
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return plain * self.input + cached * read + cache_write * write + max(int(completion), 0) * self.output


FREE = Price(0.0, 0.0, 0.0, 0.0)


def _rate(entry: dict, key: str) -> float | None:
    value = entry.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def price_of(model: str | None) -> Price | None:
    """The model's price from litellm's bundled map (by its name, then without its provider
    prefix); FREE for an offline model; None when the map does not list it."""
    if not model:
        return None
    if model.startswith(OFFLINE_PREFIX):
        return FREE
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the bundled map: no network
    import litellm

    for name in (model, model.split("/", 1)[-1]):
        entry = litellm.model_cost.get(name) or {}
        rates = _rate(entry, "input_cost_per_token"), _rate(entry, "output_cost_per_token")
        if None not in rates:
            return Price(*rates, cache_read=_rate(entry, "cache_read_input_token_cost"),
                         cache_write=_rate(entry, "cache_creation_input_token_cost"))
    return None


def unpriced(models) -> list[str]:
    """The names among `models` that have no price (sorted, each once)."""
    return sorted({m for m in models if price_of(m) is None})


def cache_write_tokens(usage) -> int:
    """Prompt tokens a provider says it wrote to its prompt cache (0 when it says nothing)."""
    for value in (getattr(usage, "cache_creation_input_tokens", None),
                  getattr(getattr(usage, "prompt_tokens_details", None), "cache_creation_tokens", None)):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e18:
            return int(value)
    return 0
