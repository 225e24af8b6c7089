"""Model prices from litellm's bundled price map, with cached-input and cache-write rates.

A provider bills a prompt in up to three parts: tokens served from its prompt cache (the
map's `cache_read_input_token_cost`), tokens written to the cache (`cache_creation_input_token_cost`,
Anthropic's cache writes) and the rest at `input_cost_per_token`; completion tokens at
`output_cost_per_token`. Where the map has no cache rate, those tokens are priced as input.
A model missing from the map has no price (`None`): its cost is unknown, never $0. Offline
models (`mlab/...`) make no paid call and cost exactly 0.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from mlab.models.errors import lookup_errors
from mlab.models.response import usage_counts

OFFLINE_PREFIX = "mlab/"


def is_offline(model: str) -> bool:
    """An offline `mlab/` model: no provider, no price, no key."""
    return model.startswith(OFFLINE_PREFIX)


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
    if is_offline(model):
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


def response_cost(litellm, response, model: str) -> float | None:
    """litellm's price of the reply (its cached-input and cache-write rates, its tiers); where it
    cannot price it (the server named a model the map lacks), the declared model's map rates
    applied to the reported usage (mlab.models.prices); None: unknown, never $0."""
    # litellm prices each response as it logs it (`_hidden_params["response_cost"]`, None when the
    # reply's model is not in its price map): reuse that rather than price the response a second time
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        cost = finite_cost(hidden["response_cost"])
    else:
        try:
            cost = finite_cost(litellm.completion_cost(completion_response=response))
        except lookup_errors(litellm):  # not in the price map under the reply's model name
            cost = None
    if cost is not None:
        return cost
    usage = getattr(response, "usage", None)
    counts, price = usage_counts(usage), price_of(model)
    if counts is None or price is None:
        return None
    return price.cost(*counts, cache_write=cache_write_tokens(usage))


def finite_cost(value) -> float | None:
    """A price as a number of dollars; None, NaN, infinite or negative: unknown."""
    try:
        cost = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return cost if cost is not None and math.isfinite(cost) and cost >= 0 else None
