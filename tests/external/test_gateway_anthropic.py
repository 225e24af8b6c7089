"""The gateway's Anthropic Messages dialect (Claude Code's), checked by Anthropic's own SDK: text,
tool calls and their results, thinking, usage, count_tokens, errors and a stalled stream, with a
scripted model (whose stream the gateway makes) and a streaming upstream (passed on as it comes)."""
from __future__ import annotations

import time

import pytest

from gateway_helpers import scripted_client, sdk_module, served, served_upstream, stalling

anthropic = sdk_module("anthropic")

TOOLS = [{"name": "bash", "description": "Run a shell command.",
          "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]


def sdk(served_gateway) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=served_gateway.base, api_key=served_gateway.key, max_retries=0)


def warm_up(served_gateway) -> None:
    with sdk(served_gateway).messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}]) as s:
        s.get_final_message()


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_call_goes_out_and_its_result_comes_back(tmp_path, stream):
    replies = [{"content": "Listing.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls -l"}}]}, "Done."]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        client = sdk(gateway)
        asked = dict(model="claude-sonnet-4-5", max_tokens=512, system="You are terse.", tools=TOOLS,
                     messages=[{"role": "user", "content": [{"type": "text", "text": "Look around."},
                                                            {"type": "text", "text": "Then stop."}]}])
        if stream:
            with client.messages.stream(**asked) as events:
                kinds = [event.type for event in events]
                reply = events.get_final_message()
            assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
            assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
        else:
            reply = client.messages.create(**asked)
        assert reply.stop_reason == "tool_use"
        text, use = reply.content
        assert text.text == "Listing." and (use.type, use.name, use.input) == ("tool_use", "bash", {"command": "ls -l"})
        assert reply.model == "claude-sonnet-4-5" and reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
        first = gateway.exchange
        assert first["dialect"] == "anthropic" and first["model"] == "claude-sonnet-4-5" and first["stream"] is stream
        assert first["messages"][0] == {"role": "system", "content": "You are terse."}
        assert [p["text"] for p in first["messages"][1]["content"]] == ["Look around.", "Then stop."]
        assert first["tools"][0]["function"]["name"] == "bash"

        history = asked["messages"] + [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                          "content": [{"type": "text", "text": "total 0"}]}]}]
        done = client.messages.create(**dict(asked, messages=history))
        assert done.content[0].text == "Done." and done.stop_reason == "end_turn"
        sent = gateway.exchange["messages"]
        assert sent[2]["tool_calls"][0]["id"] == use.id
        assert sent[3] == {"role": "tool", "tool_call_id": use.id, "content": "total 0"}
        assert len(gateway.records) == 2


def test_a_streaming_upstream_reaches_the_sdk_as_it_arrives(tmp_path):
    reply = {"content": "The answer is forty-two.", "reasoning_content": "Think it over."}
    with served_upstream(tmp_path, [reply], usage=(40, 9), cached=30, hold_streams=True) as (upstream, gateway):
        seen = []
        with sdk(gateway).messages.stream(model="claude-opus-4-1", max_tokens=256,
                                          messages=[{"role": "user", "content": "What is it?"}]) as events:
            for event in events:
                if event.type == "content_block_delta":
                    seen.append(event.delta.type)
                    if event.delta.type == "text_delta":
                        upstream.hold.set()  # a piece came while the upstream still holds the reply's end
            final = events.get_final_message()
        assert seen.count("text_delta") == 6
        assert upstream.released is True, "the pieces came one by one, as the upstream sent them, not once it had ended"
        assert [b.type for b in final.content] == ["thinking", "text"]
        assert final.content[0].thinking == "Think it over." and final.content[1].text == "The answer is forty-two."
        usage = final.usage  # Anthropic counts input without the cache's reads
        assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (10, 30, 9)
        assert (gateway.call["prompt_tokens"], gateway.call["cached_tokens"], gateway.call["completion_tokens"]) \
            == (40, 30, 9)
        assert upstream.requests[0]["stream"] is True


def test_thinking_blocks_sent_back_are_kept(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["ok"])) as gateway:
        sdk(gateway).messages.create(model="m", max_tokens=64, messages=[
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig1"},
                                              {"type": "text", "text": "b"}]},
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                      "data": "iVBORw0KGgo="}},
                                         {"type": "text", "text": "and this?"}]}])
        assistant, user = gateway.exchange["messages"][1:]
        assert assistant["thinking_blocks"] == [{"type": "thinking", "thinking": "hmm", "signature": "sig1"}]
        assert assistant["reasoning_content"] == "hmm" and assistant["content"] == "b"
        assert user["content"][0] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def test_count_tokens_counts_the_request(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, [])) as gateway:
        client = sdk(gateway)
        short = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "hi"}])
        long = client.messages.count_tokens(model="m", tools=TOOLS,
                                            messages=[{"role": "user", "content": "hi " * 200}])
        assert 0 < short.input_tokens < long.input_tokens
        assert gateway.records == []  # no model call, nothing recorded or charged


def test_errors_are_anthropic_errors(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["one", "two"]), limits={"steps": 1}) as gateway:
        client = sdk(gateway)
        with pytest.raises(anthropic.AuthenticationError):
            anthropic.Anthropic(base_url=gateway.base, api_key="sk-ant-wrong", max_retries=0).messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.BadRequestError, match="server_tool"):
            client.messages.create(model="m", max_tokens=8, messages=[
                {"role": "user", "content": [{"type": "server_tool_use", "id": "x"}]}])
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.RateLimitError, match="steps limit"):
            with client.messages.stream(model="m", max_tokens=8, messages=[{"role": "user", "content": "again"}]) as s:
                s.get_final_message()
        assert [end.end_reason for end in gateway.ends] == ["steps_limit"]
        assert gateway.ends[0].failure_mode == "limit reached" and len(gateway.records) == 1


def test_a_stalled_stream_ends_with_an_error_event_and_a_record(tmp_path):
    with stalling(tmp_path, warm_up) as gateway:
        started = time.monotonic()
        with pytest.raises(anthropic.APIStatusError, match="stalled"):
            with sdk(gateway).messages.stream(model="m", max_tokens=64,
                                              messages=[{"role": "user", "content": "go"}]) as events:
                for _ in events:
                    pass
        assert time.monotonic() - started < 10


THOUGHT = [{"type": "thinking", "thinking": "Think it over.", "signature": "sig-upstream-1"}]


@pytest.mark.parametrize("stream", [True, False])
def test_a_thinking_block_and_its_signature_go_out_and_come_back_to_the_upstream(tmp_path, stream):
    reply = {"content": "Forty-two.", "reasoning_content": "Think it over.", "thinking_blocks": THOUGHT}
    # no stall time to speak of: the first streamed call of a process imports for seconds on a loaded machine
    with served_upstream(tmp_path, [reply, "Done."], stall_s=300) as (upstream, gateway):
        client = sdk(gateway)
        asked = dict(model="claude-opus-4-1", max_tokens=256, messages=[{"role": "user", "content": "What is it?"}])
        if stream:
            with client.messages.stream(**asked) as events:
                final = events.get_final_message()
        else:
            final = client.messages.create(**asked)
        thinking, text = final.content
        assert (thinking.type, thinking.thinking, thinking.signature) == ("thinking", "Think it over.", "sig-upstream-1")
        client.messages.create(model="claude-opus-4-1", max_tokens=256, messages=[
            {"role": "user", "content": "What is it?"},
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]},
            {"role": "user", "content": "Sure?"}])
        assert upstream.requests[1]["messages"][1]["thinking_blocks"] == THOUGHT
