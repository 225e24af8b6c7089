"""Cost per call from litellm's price map: cached-input and cache-write rates where the map has
them, the declared model's price when the reply names a model the map lacks, unknown (None,
never $0) for a model without a price. Every expected figure is worked out by hand from the
map's rates."""
import pytest

from fake_openai import FakeOpenAI
from mlab.models.client import ModelClient, TierConfig, import_litellm
from mlab.models.prices import response_cost as _cost
from mlab.models.prices import FREE, price_of, unpriced

# gpt-4o in litellm's bundled map: $2.50 / M input, $1.25 / M cached input, $10 / M output
GPT_4O = (2.5e-6, 1.25e-6, 1e-5)
# claude-sonnet-4-5: $3 / M input, $0.30 / M cache read, $3.75 / M cache write, $15 / M output
SONNET = (3e-6, 3e-7, 3.75e-6, 1.5e-5)


def test_the_map_rates_are_read_with_their_cache_rates():
    price = price_of("openai/gpt-4o")
    assert (price.input, price.cache_read, price.output) == GPT_4O
    sonnet = price_of("anthropic/claude-sonnet-4-5")
    assert (sonnet.input, sonnet.cache_read, sonnet.cache_write, sonnet.output) == SONNET
    assert price_of("mlab/demo") == FREE
    assert price_of("openai/some-model-nobody-prices") is None
    assert unpriced(["mlab/demo", "gpt-4o", "x/unlisted", "x/unlisted"]) == ["x/unlisted"]


def test_cached_prompt_tokens_are_billed_at_the_cached_rate(monkeypatch):
    """1,000 prompt tokens of which 800 cached, 100 completion tokens: 200 × $2.50/M +
    800 × $1.25/M + 100 × $10/M = $0.0005 + $0.001 + $0.001 = $0.0025 (not $0.0035 uncached)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(["x", "y"], usage=(1000, 100), cached=800) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base)
        call = client.complete("main", "hi", purpose="step")
    assert call.cached_tokens == 800
    assert call.cost == pytest.approx(0.0025)
    assert price_of("gpt-4o").cost(1000, 100) == pytest.approx(0.0035)


def test_cache_writes_are_billed_at_the_cache_write_rate_with_the_declared_models_price():
    """A reply whose model name is not in the map (a proxy's alias) is priced as the declared
    model: 1,000 prompt tokens, 500 read from the cache, 300 written to it, 100 completion:
    200 × $3/M + 500 × $0.30/M + 300 × $3.75/M + 100 × $15/M = $0.003375."""
    litellm = import_litellm()
    from litellm import ModelResponse
    from litellm.types.utils import PromptTokensDetailsWrapper, Usage

    usage = Usage(prompt_tokens=1000, completion_tokens=100, total_tokens=1100, cache_creation_input_tokens=300,
                  cache_read_input_tokens=500, prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=500))
    reply = ModelResponse(model="my-proxy-alias", choices=[{"message": {"role": "assistant", "content": "x"}}],
                          usage=usage)
    assert _cost(litellm, reply, "anthropic/claude-sonnet-4-5") == pytest.approx(0.003375)
    assert _cost(litellm, reply, "anthropic/unlisted-model") is None  # unknown, not $0


def test_an_unpriced_reply_is_unknown_not_free(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(["x"], usage=(1000, 100), cached=800) as server:
        client = ModelClient({"main": TierConfig("openai/some-model-nobody-prices")}, api_base=server.base)
        assert client.complete("main", "hi", purpose="step").cost is None
