"""Metering at the gateway, whatever the dialect: each exchange's tokens, cache reads and writes and
cost come from the upstream's usage (not the agent's word), are charged to the run as the exchange
ends, and a cost limit reached ends the run with the dialect's error."""
from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI
from gateway_helpers import sdk_module, served

from mlab.models.client import ModelClient, TierConfig
from mlab.models.prices import price_of

anthropic = sdk_module("anthropic")


def priced_client(base: str) -> ModelClient:
    return ModelClient({t: TierConfig("openai/gpt-4o-mini") for t in ("main", "fast", "edit")}, api_base=base,
                       max_attempts=1)


@pytest.mark.parametrize("stream", [True, False])
def test_tokens_cache_and_cost_come_from_the_upstream_and_a_cost_limit_ends_the_run(tmp_path, stream):
    price = price_of("openai/gpt-4o-mini")
    expected = price.cost(4000, 500, 1000, cache_write=2000)
    with FakeOpenAI(["first", "second"], usage=(4000, 500), cached=1000, cache_written=2000) as upstream, \
            served(tmp_path, priced_client(upstream.base), limits={"cost": expected * 0.5}) as gateway:
        client = anthropic.Anthropic(base_url=gateway.base, api_key=gateway.key, max_retries=0)
        asked = dict(model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
        if stream:
            with client.messages.stream(**asked) as events:
                reply = events.get_final_message()
        else:
            reply = client.messages.create(**asked)
        usage = reply.usage
        assert (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
                usage.output_tokens) == (1000, 1000, 2000, 500)
        call = gateway.call
        assert (call["prompt_tokens"], call["cached_tokens"], call["cache_write_tokens"]) == (4000, 1000, 2000)
        assert call["cost"] == pytest.approx(expected, rel=0.25) and call["cost"] > 0
        assert gateway.gateway.usage.cost == call["cost"]  # charged as the exchange ended
        with pytest.raises(anthropic.RateLimitError, match="cost limit"):
            client.messages.create(**asked)
        assert [(e.end_reason, e.failure_mode) for e in gateway.ends] == [("cost_limit", "limit reached")]
        assert len(upstream.requests) == 1, "the call past the limit never reached the model"
