"""The gateway's OpenAI Responses dialect (Codex CLI's), checked by OpenAI's own SDK: text, function
and custom (freeform) tool calls and their outputs, reasoning summaries, usage, errors and a
stalled stream, with a scripted model and a streaming upstream."""
from __future__ import annotations

import json

import openai
import pytest

from gateway_helpers import scripted_client, served, served_upstream, stalling

TOOLS = [{"type": "function", "name": "shell", "description": "Run a command.", "strict": False,
          "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}},
                         "required": ["command"]}}]


def sdk(served_gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=served_gateway.base + "/v1", api_key=served_gateway.key, max_retries=0)


def warm_up(served_gateway) -> None:
    list(sdk(served_gateway).responses.create(model="m", input="hi", stream=True))


@pytest.mark.parametrize("stream", [True, False])
def test_a_function_call_goes_out_and_its_output_comes_back(tmp_path, stream):
    replies = [{"content": "Listing.", "tool_calls": [{"name": "shell", "arguments": {"command": ["ls", "-l"]}}]},
               "Done."]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        client = sdk(gateway)
        asked = dict(model="gpt-5-codex", instructions="You are Codex.", tools=TOOLS, parallel_tool_calls=False,
                     input=[{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be careful."}]},
                            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Look."}]}])
        if stream:
            with client.responses.stream(**asked) as events:
                kinds = [event.type for event in events]
                response = events.get_final_response()
            assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
            assert kinds.count("response.output_item.added") == kinds.count("response.output_item.done") == 2
            assert "response.function_call_arguments.delta" in kinds
        else:
            response = client.responses.create(**asked)
        message, call = response.output
        assert response.status == "completed" and response.output_text == "Listing."
        assert (call.type, call.name, json.loads(call.arguments)) == ("function_call", "shell", {"command": ["ls", "-l"]})
        assert response.model == "gpt-5-codex" and response.usage.input_tokens > 0
        first = gateway.exchange
        assert first["dialect"] == "responses" and first["model"] == "gpt-5-codex"
        assert [m["role"] for m in first["messages"]] == ["system", "system", "user"]

        history = asked["input"] + [item.model_dump(exclude_none=True) for item in response.output] + [
            {"type": "function_call_output", "call_id": call.call_id, "output": "total 0"}]
        done = client.responses.create(**dict(asked, input=history))
        assert done.output_text == "Done."
        sent = gateway.exchange["messages"]
        assert sent[3]["content"] == "Listing." and sent[3]["tool_calls"][0]["id"] == call.call_id
        assert sent[4] == {"role": "tool", "tool_call_id": call.call_id, "content": "total 0"}


def test_a_custom_tool_takes_and_gives_freeform_text(tmp_path):
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    replies = [{"content": None, "tool_calls": [{"name": "apply_patch", "arguments": {"input": patch}}]}, "ok"]
    custom = [{"type": "custom", "name": "apply_patch", "description": "Edit files.",
               "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}}]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        client = sdk(gateway)
        with client.responses.stream(model="m", tools=custom, input="add a.txt") as events:
            for _ in events:
                pass
            (call,) = events.get_final_response().output
        assert (call.type, call.name, call.input) == ("custom_tool_call", "apply_patch", patch)
        assert gateway.exchange["tools"][0]["function"]["parameters"]["required"] == ["input"]
        client.responses.create(model="m", tools=custom, input=[
            {"role": "user", "content": "add a.txt"}, call.model_dump(exclude_none=True),
            {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"}])
        assistant, result = gateway.exchange["messages"][1:]
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"input": patch}
        assert result == {"role": "tool", "tool_call_id": call.call_id, "content": "Done!"}


def test_a_streaming_upstream_reaches_the_sdk_as_it_arrives(tmp_path):
    reply = {"content": "Use gradient boosting.", "reasoning_content": "Tabular data, small."}
    with served_upstream(tmp_path, [reply], usage=(64, 10), cached=48, hold_streams=True) as (upstream, gateway):
        seen = []
        with sdk(gateway).responses.stream(model="gpt-5", input="Which model?") as events:
            for event in events:
                seen.append(event.type)
                if event.type == "response.output_text.delta":
                    upstream.hold.set()  # a piece came while the upstream still holds the reply's end
            response = events.get_final_response()
        assert seen.count("response.output_text.delta") == 6
        assert upstream.released is True, "the pieces came as the upstream sent them, not once it had ended"
        reasoning, message = response.output
        assert reasoning.type == "reasoning" and reasoning.summary[0].text == "Tabular data, small."
        assert response.output_text == "Use gradient boosting."
        usage = response.usage
        assert (usage.input_tokens, usage.input_tokens_details.cached_tokens, usage.output_tokens) == (64, 48, 10)
        assert gateway.call["cached_tokens"] == 48


def test_errors_are_openai_errors(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["one"]), limits={"steps": 1}) as gateway:
        client = sdk(gateway)
        with pytest.raises(openai.BadRequestError, match="previous_response_id"):
            client.responses.create(model="m", input="hi", previous_response_id="resp_1")
        with pytest.raises(openai.BadRequestError, match="web_search"):
            client.responses.create(model="m", input="hi", tools=[{"type": "web_search", "name": "web_search"}])
        client.responses.create(model="m", input="hi")
        with pytest.raises(openai.RateLimitError, match="steps limit"):
            with client.responses.stream(model="m", input="again") as events:
                events.get_final_response()
        assert [end.end_reason for end in gateway.ends] == ["steps_limit"]


def test_a_stalled_stream_ends_with_response_failed_and_a_record(tmp_path):
    with stalling(tmp_path, warm_up) as gateway:
        events = list(sdk(gateway).responses.create(model="m", input="go", stream=True))
        assert events[-1].type == "response.failed" and "stalled" in events[-1].response.error.message


THOUGHT = [{"type": "thinking", "thinking": "The data is tabular.", "signature": "sig-upstream-1"}]


@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_goes_out_as_an_encrypted_item_and_comes_back_to_the_upstream(tmp_path, stream):
    """The upstream's reasoning blocks (with their signatures) reach the agent as a reasoning item
    with encrypted_content; sent back in the next turn's input, they reach the upstream again."""
    reply = {"content": None, "reasoning_content": "The data is tabular.", "thinking_blocks": THOUGHT,
             "tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "shell", "arguments": '{"command": ["ls"]}'}}]}
    # no stall time to speak of: the first streamed call of a process imports for seconds on a loaded machine
    with served_upstream(tmp_path, [reply, "Done."], stall_s=300) as (upstream, gateway):
        client = sdk(gateway)
        asked = dict(model="gpt-5-codex", tools=TOOLS, include=["reasoning.encrypted_content"], store=False,
                     input=[{"role": "user", "content": "Look."}])
        if stream:
            with client.responses.stream(**asked) as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(**asked)
        reasoning, call = response.output
        assert reasoning.type == "reasoning" and reasoning.summary[0].text == "The data is tabular."
        assert reasoning.encrypted_content
        client.responses.create(model="gpt-5-codex", tools=TOOLS, store=False, input=[
            {"role": "user", "content": "Look."}, reasoning.model_dump(exclude_none=True),
            call.model_dump(exclude_none=True), {"type": "function_call_output", "call_id": call.call_id,
                                                 "output": "total 0"}])
        assistant = upstream.requests[1]["messages"][1]
        assert assistant["thinking_blocks"] == THOUGHT and assistant["tool_calls"][0]["id"] == call.call_id
        assert "notes" not in gateway.exchange


def test_reasoning_another_server_encrypted_is_dropped_with_a_note(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["ok"])) as gateway:
        sdk(gateway).responses.create(model="m", input=[
            {"role": "user", "content": "a"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hmm"}],
             "encrypted_content": "gAAAAABo-not-ours"},
            {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}])
        assistant = gateway.exchange["messages"][1]
        assert assistant == {"role": "assistant", "content": "b", "reasoning_content": "hmm"}
        assert gateway.exchange["notes"] == ["input[1]: a reasoning item's encrypted_content that this gateway did "
                                             "not issue was dropped (its summary is kept)"]


def test_compact_summarises_through_the_runs_model_and_the_summary_comes_back(tmp_path):
    """POST /v1/responses/compact (the SDK's responses.compact): the run's model writes the summary
    (one exchange, metered and recorded), which comes back sealed in a compaction item after the
    user messages; sent back as input, the compaction item is the summary again."""
    with served(tmp_path, scripted_client(tmp_path, ["Trees win; next: tune depth.", "ok"])) as gateway:
        client = sdk(gateway)
        compacted = client.responses.compact(model="gpt-5-codex", instructions="You are Codex.", input=[
            {"role": "user", "content": "Fit a model."}, {"role": "assistant", "content": "Trees fit best."}])
        assert compacted.object == "response.compaction" and compacted.usage.input_tokens > 0
        user, compaction = compacted.output
        assert user.role == "user" and user.content[0].text == "Fit a model."
        assert compaction.type == "compaction" and compaction.encrypted_content
        asked = gateway.exchange
        assert asked["compaction"] is True and asked["tools"] is None and len(gateway.records) == 1
        assert asked["messages"][-1]["role"] == "user" and "Summarise this conversation" in asked["messages"][-1]["content"]
        client.responses.create(model="gpt-5-codex", input=[
            user.model_dump(exclude_none=True), compaction.model_dump(exclude_none=True),
            {"role": "user", "content": "Go on."}])
        assert gateway.exchange["messages"][1] == {
            "role": "user", "content": "A summary of the conversation so far, which was compacted:\n\n"
                                       "Trees win; next: tune depth."}
        assert "compaction" not in gateway.exchange


def test_a_compaction_trigger_is_answered_with_a_compaction_item_in_the_stream(tmp_path):
    """Codex 0.171 with an OpenAI provider compacts by a streamed /v1/responses whose input ends with
    a compaction_trigger item; the answer is one compaction item."""
    with served(tmp_path, scripted_client(tmp_path, ["The summary."])) as gateway:
        with sdk(gateway).responses.stream(model="m", tools=TOOLS, input=[
                {"role": "user", "content": "Fit a model."}, {"type": "compaction_trigger"}]) as events:
            response = events.get_final_response()
        (compaction,) = response.output
        assert compaction.type == "compaction" and compaction.encrypted_content
        assert gateway.exchange["compaction"] is True and gateway.exchange["tools"] is None
        with pytest.raises(openai.BadRequestError, match="compaction_trigger must be the last"):
            sdk(gateway).responses.create(model="m", input=[{"type": "compaction_trigger"},
                                                            {"role": "user", "content": "x"}])
