"""Token counts of offline models are estimated without a tokenizer, and litellm's default
tokenizer (tiktoken's table, about 40 MB) is loaded only when a counter really uses it."""
import json

import pytest

from mlab.models import tokens
from mlab.models.client import ModelClient, TierConfig, import_litellm


def test_text_is_estimated_at_one_token_per_started_four_bytes():
    assert [tokens.count_text(t) for t in ("", "abcd", "abcde", "é" * 4)] == [0, 1, 2, 2]


def test_a_conversation_counts_each_message_and_its_tools():
    one = [{"role": "user", "content": "abcd"}]
    assert tokens.count_messages(one) == tokens.REPLY_PRIMING + tokens.PER_MESSAGE + 1 + 1  # role "user", "abcd"
    tools = [{"type": "function", "function": {"name": "list_files", "parameters": {}}}]
    assert tokens.count_messages(one, tools) == tokens.count_messages(one) + \
        tokens.count_text(json.dumps(tools, ensure_ascii=False))


@pytest.fixture
def no_tokenizer(monkeypatch):
    """litellm's tokenizer made unusable: the test fails if anything counts with it."""
    litellm = import_litellm()

    def refused(*args, **kwargs):
        raise AssertionError("litellm's tokenizer was used")

    monkeypatch.setattr(litellm, "token_counter", refused)
    monkeypatch.setattr(litellm.main, "_encoding_cache", tokens.DeferredEncoding(refused))
    return litellm


def test_offline_calls_never_load_a_tokenizer(tmp_path, no_tokenizer):
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(["the first reply", "a second reply"]))
    client = ModelClient({"main": TierConfig(f"mlab/scripted:{path}")})
    call = client.complete("main", "a prompt of some length", purpose="step", stable_prefix="a prompt")
    assert (call.prompt_tokens, call.completion_tokens, call.usage_reported) == (6, 4, False)
    messages = [{"role": "user", "content": "hello"}]
    chat = client.chat("main", messages)
    assert (chat.prompt_tokens, chat.completion_tokens) == (tokens.count_messages(messages), 4)


def test_litellm_gets_a_deferred_encoding_that_is_the_real_one_when_used():
    litellm = import_litellm()
    from litellm._lazy_imports import get_default_encoding

    deferred = tokens.DeferredEncoding(get_default_encoding)
    assert deferred._real is None
    assert deferred.encode("hello world") == get_default_encoding().encode("hello world")
    assert isinstance(litellm.main._encoding_cache, tokens.DeferredEncoding) or \
        "encoding" in vars(litellm.main)  # loaded already by an earlier counter in this process


def test_a_provider_response_without_usage_is_still_counted_by_litellms_tokenizer():
    litellm = import_litellm()
    client = ModelClient({"main": TierConfig("openai/gpt-4o-mini")})
    reply = "a reply from the server, counted"
    call = client._account(litellm, object(), reply, "main", "openai/gpt-4o-mini", "step", "a prompt", 1, 0.1)
    assert not call.usage_reported
    assert call.completion_tokens == litellm.token_counter(model="gpt-3.5-turbo", text=reply)
    assert call.completion_tokens != tokens.count_text(reply)
