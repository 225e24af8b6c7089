"""The gateway's chat-completions dialect, checked by OpenAI's own SDK: text, tool calls, usage and
errors, streamed and not, with a scripted model and a streaming upstream."""
from __future__ import annotations


import openai
import pytest
from fake_openai import tool_call
from gateway_helpers import scripted_client, served, served_upstream, stalling

TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Run a shell command.", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]


def sdk(served_gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=served_gateway.base + "/v1", api_key=served_gateway.key, max_retries=0)


def warm_up(served_gateway) -> None:
    list(sdk(served_gateway).chat.completions.create(model="main", messages=[{"role": "user", "content": "hi"}],
                                                     stream=True))


@pytest.mark.parametrize("stream", [True, False])
def test_a_tool_call_and_its_result(tmp_path, stream):
    replies = [{"content": "Listing.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}, "Done."]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        client = sdk(gateway)
        messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Look."}]
        if stream:
            with client.chat.completions.stream(model="gpt-5", messages=messages, tools=TOOLS) as events:
                for _ in events:
                    pass
                completion = events.get_final_completion()
        else:
            completion = client.chat.completions.create(model="gpt-5", messages=messages, tools=TOOLS)
        message = completion.choices[0].message
        assert completion.choices[0].finish_reason == "tool_calls" and message.content == "Listing."
        (call,) = message.tool_calls
        assert (call.function.name, call.function.arguments) == ("bash", '{"command": "ls"}')
        assert completion.model == "gpt-5" and gateway.exchange["model"] == "gpt-5"
        assert gateway.exchange["dialect"] == "chat"
        messages += [message.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": call.id, "content": "a"}]
        done = client.chat.completions.create(model="gpt-5", messages=messages, tools=TOOLS)
        assert done.choices[0].message.content == "Done." and done.usage.prompt_tokens > 0


def test_a_streaming_upstream_reaches_the_sdk_as_it_arrives(tmp_path):
    reply = tool_call("bash", {"command": "python train.py --epochs 3"}, call_id="call_9", content="Training now.")
    with served_upstream(tmp_path, [reply], usage=(50, 12), cached=20, hold_streams=True) as (upstream, gateway):
        stream = sdk(gateway).chat.completions.create(model="main", messages=[{"role": "user", "content": "go"}],
                                                      tools=TOOLS, stream=True)
        pieces, arguments, usage = [], "", None
        for chunk in stream:
            if any(choice.delta.content for choice in chunk.choices):
                upstream.hold.set()  # a piece came while the upstream still holds the reply's end
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                pieces.append(choice.delta.content or "")
                for call in choice.delta.tool_calls or []:
                    arguments += call.function.arguments or ""
        assert "".join(pieces) == "Training now." and arguments == '{"command": "python train.py --epochs 3"}'
        assert upstream.released is True, "the pieces came as the upstream sent them, not once it had ended"
        assert (usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details.cached_tokens) == (50, 12, 20)
        assert gateway.call["message"]["tool_calls"][0]["id"] == "call_9"


def test_errors_are_openai_errors(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["one"]), limits={"steps": 1}) as gateway:
        client = sdk(gateway)
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=gateway.base + "/v1", api_key="sk-wrong", max_retries=0).models.list()
        with pytest.raises(openai.BadRequestError, match="messages"):
            client.chat.completions.create(model="main", messages=[])
        client.chat.completions.create(model="main", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.RateLimitError, match="steps limit"):
            client.chat.completions.create(model="main", messages=[{"role": "user", "content": "again"}], stream=True)
        assert [end.end_reason for end in gateway.ends] == ["steps_limit"]


def test_a_stalled_stream_ends_with_an_error_chunk_and_a_record(tmp_path):
    with stalling(tmp_path, warm_up) as gateway:
        stream = sdk(gateway).chat.completions.create(model="main", messages=[{"role": "user", "content": "go"}],
                                                      stream=True)
        with pytest.raises(openai.APIError, match="stalled"):
            for _ in stream:
                pass
