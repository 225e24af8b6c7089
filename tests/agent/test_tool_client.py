"""ModelClient.chat: tool calls read back from offline models and from an OpenAI-compatible
server, the assistant message kept verbatim, tokens (tools array and cached prefix counted),
cache marks for Anthropic, and a server's refusal of the tools field."""
import json

import pytest

from fake_openai import FakeOpenAI, tool_call
from mlab.models.client import ModelClient, TierConfig, mark_cache
from mlab.models.errors import ModelError, RepliesExhausted, ToolsRefused

TOOLS = [{"type": "function", "function": {
    "name": "list_files", "description": "List the files of a folder.",
    "parameters": {"type": "object", "properties": {"dir_path": {"type": "string"}}, "required": ["dir_path"]}}},
    {"type": "function", "function": {
        "name": "final_answer", "description": "Submit.",
        "parameters": {"type": "object", "properties": {"final_answer": {"type": "string"}}}}}]
CONVERSATION = [{"role": "system", "content": "You are a researcher."}, {"role": "user", "content": "Predict y."}]


def scripted_client(tmp_path, replies) -> ModelClient:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(replies))
    return ModelClient({"main": TierConfig(f"mlab/scripted:{path}")})


def test_a_scripted_reply_object_becomes_a_tool_call_with_its_text(tmp_path):
    client = scripted_client(tmp_path, [
        {"content": "Thought: look first", "tool_calls": [{"name": "list_files", "arguments": {"dir_path": "."}}]},
        "plain text"])
    call = client.chat("main", CONVERSATION, tools=TOOLS, tool_choice="required")
    message = call.message
    assert message["role"] == "assistant" and message["content"] == "Thought: look first"
    [made] = message["tool_calls"]
    assert made["type"] == "function" and made["id"].startswith("call_")
    assert made["function"] == {"name": "list_files", "arguments": '{"dir_path": "."}'}
    assert call.response == "Thought: look first"
    assert call.to_json()["message"] == message
    # a plain string entry answers a chat call with text only
    assert client.chat("main", CONVERSATION, tools=TOOLS).message == {"role": "assistant", "content": "plain text"}


def test_tokens_of_a_chat_count_the_tools_and_a_repeated_prefix_is_cached(tmp_path):
    entry = {"content": None, "tool_calls": [{"name": "list_files", "arguments": {"dir_path": "."}}]}
    client = scripted_client(tmp_path, [entry] * 3)
    without = client.chat("main", CONVERSATION)
    first = client.chat("main", CONVERSATION, tools=TOOLS)
    assert first.prompt_tokens > without.prompt_tokens + 20  # the tools' schemas are part of the prompt
    assert first.cached_tokens == 0  # the previous call had no tools: nothing to reuse
    longer = CONVERSATION + [first.message, {"role": "tool", "tool_call_id": first.message["tool_calls"][0]["id"],
                                             "content": "train.csv"}]
    second = client.chat("main", longer, tools=TOOLS)
    assert 0 < second.cached_tokens < second.prompt_tokens
    assert second.completion_tokens > 0 and second.cost == 0.0 and not second.usage_reported


def test_a_scripted_reply_object_with_unknown_fields_is_refused(tmp_path):
    client = scripted_client(tmp_path, [{"text": "hi"}])
    with pytest.raises(RepliesExhausted, match="reply 1 has unknown field.*text"):
        client.chat("main", CONVERSATION, tools=TOOLS)


def test_anthropic_gets_cache_marks_on_the_system_block_and_the_last_tool_only():
    messages = CONVERSATION + [{"role": "user", "content": "This is step 2."}]
    marked, tools = mark_cache(messages, TOOLS, "anthropic/claude-sonnet-4-5")
    assert marked[0]["content"] == [{"type": "text", "text": "You are a researcher.",
                                     "cache_control": {"type": "ephemeral"}}]
    assert marked[1:] == messages[1:]  # the user messages (the changing turn) are not marked
    assert "cache_control" not in tools[0] and tools[-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in TOOLS[-1]  # the caller's tools are left as they were
    assert mark_cache(messages, TOOLS, "openai/gpt-4o") == (messages, TOOLS)


@pytest.fixture
def server_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def test_a_server_tool_call_is_read_with_its_id_and_arguments_as_sent(server_key):
    reply = tool_call("list_files", '{"dir_path":  "."}', "call_abc", content="looking")
    reply["reasoning_content"] = "I should look at the files."
    with FakeOpenAI([reply], usage=(120, 9), cached=100) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base)
        call = client.chat("main", CONVERSATION, tools=TOOLS, tool_choice="required", parallel_tool_calls=False)
    request = server.requests[0]
    assert request["tools"] == TOOLS and request["tool_choice"] == "required"
    assert request["parallel_tool_calls"] is False
    assert call.message["tool_calls"] == [{"id": "call_abc", "type": "function",
                                           "function": {"name": "list_files", "arguments": '{"dir_path":  "."}'}}]
    assert call.message["content"] == "looking"
    assert call.message["reasoning_content"] == "I should look at the files."  # echoed back next step
    assert (call.prompt_tokens, call.completion_tokens, call.cached_tokens) == (120, 9, 100)


def test_a_server_that_refuses_tools_raises_tools_refused_without_retrying(server_key):
    with FakeOpenAI(["unused"], refuse_tools=True) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base, backoff_s=0)
        with pytest.raises(ToolsRefused, match="refused the tools of the request.*not supported"):
            client.chat("main", CONVERSATION, tools=TOOLS)
        assert len(server.requests) == 1
        assert client.chat("main", CONVERSATION).response == "unused"  # without tools it answers


def test_a_bad_request_that_is_not_about_tools_stays_a_model_error(server_key):
    with FakeOpenAI([], faults=[500, 500]) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base, backoff_s=0,
                             max_attempts=2, on_retry=lambda line: None)
        with pytest.raises(ModelError) as raised:
            client.chat("main", CONVERSATION, tools=TOOLS)
    assert not isinstance(raised.value, ToolsRefused)


def test_the_anthropic_request_litellm_makes_caches_the_system_block_and_the_tools():
    """What litellm sends Anthropic for a tool agent's conversation: the system block and the
    last tool carry the cache mark, the changing turn does not, one call per reply."""
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig

    call = {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": '{"dir_path": "."}'}}
    messages = CONVERSATION + [{"role": "assistant", "content": "Thought: look", "tool_calls": [call]},
                               {"role": "tool", "tool_call_id": "c1", "content": "train.csv"},
                               {"role": "user", "content": "This is step 2."}]
    marked, tools = mark_cache(messages, TOOLS, "anthropic/claude-sonnet-4-5")
    config = AnthropicConfig()
    params = config.map_openai_params({"tools": tools, "tool_choice": "required", "parallel_tool_calls": False}, {},
                                      "claude-sonnet-4-5", False)
    request = config.transform_request("claude-sonnet-4-5", marked, params, {}, {})
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert [t.get("cache_control") for t in request["tools"]] == [None, {"type": "ephemeral"}]
    assert request["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert "cache_control" not in json.dumps(request["messages"])
    assert request["messages"][-1]["content"][0] == {"type": "tool_result", "tool_use_id": "c1", "content": "train.csv"}


def test_a_server_that_takes_only_tool_choice_auto_is_asked_again_with_auto(server_key):
    replies = [tool_call("list_files", {"dir_path": "."}, "call_1"), tool_call("list_files", {"dir_path": "."}, "c2")]
    with FakeOpenAI(replies, auto_only=True) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base, backoff_s=0)
        for _ in range(2):
            assert client.chat("main", CONVERSATION, tools=TOOLS, tool_choice="required").message["tool_calls"]
    assert [r["tool_choice"] for r in server.requests] == ["required", "auto", "auto"]


def test_a_server_that_refuses_the_parallel_switch_is_asked_again_without_it(server_key):
    replies = [tool_call("list_files", {"dir_path": "."}, "call_1"), tool_call("list_files", {"dir_path": "."}, "c2")]
    with FakeOpenAI(replies, refuse_parallel=True) as server:
        client = ModelClient({"main": TierConfig("openai/gpt-4o")}, api_base=server.base, backoff_s=0)
        first = client.chat("main", CONVERSATION, tools=TOOLS, parallel_tool_calls=False)
        second = client.chat("main", CONVERSATION, tools=TOOLS, parallel_tool_calls=False)
    assert [c["id"] for c in (first.message["tool_calls"] + second.message["tool_calls"])] == ["call_1", "c2"]
    assert ["parallel_tool_calls" in r for r in server.requests] == [True, False, False]
    assert all("tools" in r for r in server.requests)
