"""The gateway's Gemini dialect (Gemini CLI's), checked by Google's own SDK (google-genai): text,
function calls and their responses, thoughts, usage, countTokens, errors and a stalled stream, with
a scripted model and a streaming upstream."""
from __future__ import annotations

import pytest

from gateway_helpers import scripted_client, sdk_module, served, served_upstream, stalling

genai = sdk_module("google.genai")
from google.genai import errors, types  # noqa: E402 - after the SDK is known to be there

SHELL = types.FunctionDeclaration(name="run_shell_command", description="Run a shell command.",
                                  parameters=types.Schema(type="OBJECT", required=["command"], properties={
                                      "command": types.Schema(type="STRING", description="the command")}))


def sdk(served_gateway):
    options = types.HttpOptions(base_url=served_gateway.base, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key=served_gateway.key, http_options=options)


def warm_up(served_gateway) -> None:
    client = sdk(served_gateway)
    list(client.models.generate_content_stream(model="m", contents="hi"))


def parts_of(responses) -> list:
    return [part for response in responses for part in (response.candidates[0].content.parts or [])]


@pytest.mark.parametrize("stream", [True, False])
def test_a_function_call_goes_out_and_its_response_comes_back(tmp_path, stream):
    replies = [{"content": "Listing.", "tool_calls": [{"name": "run_shell_command", "arguments": {"command": "ls"}}]},
               "Done."]
    with served(tmp_path, scripted_client(tmp_path, replies)) as gateway:
        client = sdk(gateway)
        config = types.GenerateContentConfig(system_instruction="You are terse.",
                                             tools=[types.Tool(function_declarations=[SHELL])])
        if stream:
            chunks = list(client.models.generate_content_stream(model="gemini-2.5-pro", contents="Look.", config=config))
        else:
            chunks = [client.models.generate_content(model="gemini-2.5-pro", contents="Look.", config=config)]
        parts = parts_of(chunks)
        text = "".join(p.text or "" for p in parts)
        (call,) = [p.function_call for p in parts if p.function_call]
        assert text == "Listing." and (call.name, call.args) == ("run_shell_command", {"command": "ls"})
        assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
        assert chunks[-1].usage_metadata.prompt_token_count > 0 and chunks[-1].usage_metadata.candidates_token_count > 0
        first = gateway.exchange
        assert first["dialect"] == "gemini" and first["model"] == "gemini-2.5-pro" and first["stream"] is stream
        assert first["messages"][0] == {"role": "system", "content": "You are terse."}
        assert first["tools"][0]["function"]["parameters"]["properties"]["command"]["type"] == "string"

        history = [types.Content(role="user", parts=[types.Part(text="Look.")]),
                   types.Content(role="model", parts=[types.Part(text="Listing."), types.Part(function_call=call)]),
                   types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                       id=call.id, name=call.name, response={"output": "total 0"}))])]
        done = client.models.generate_content(model="gemini-2.5-pro", contents=history, config=config)
        assert done.text == "Done."
        sent = gateway.exchange["messages"]
        assert sent[2]["tool_calls"][0]["id"] == call.id
        assert sent[3] == {"role": "tool", "tool_call_id": call.id, "content": '{"output": "total 0"}'}


def test_a_response_without_ids_answers_the_call_of_its_name(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["ok"])) as gateway:
        client = sdk(gateway)  # kept: the SDK closes its connection when its client is collected
        client.models.generate_content(model="m", contents=[
            types.Content(role="user", parts=[types.Part(text="go")]),
            types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="a", args={})),
                                               types.Part(function_call=types.FunctionCall(name="b", args={"x": 1}))]),
            types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(name="b", response={"r": 2})),
                types.Part(function_response=types.FunctionResponse(name="a", response={"r": 1}))])])
        assistant, first, second = gateway.exchange["messages"][1:]
        ids = {c["function"]["name"]: c["id"] for c in assistant["tool_calls"]}
        assert (first["tool_call_id"], second["tool_call_id"]) == (ids["b"], ids["a"]) and ids["a"] != ids["b"]


def test_a_streaming_upstream_reaches_the_sdk_as_it_arrives(tmp_path):
    reply = {"content": "Scale the features first.", "reasoning_content": "Distances matter."}
    with served_upstream(tmp_path, [reply], usage=(30, 8), cached=16, hold_streams=True) as (upstream, gateway):
        chunks, client = [], sdk(gateway)
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Advice?"):
            upstream.hold.set()  # a piece came while the upstream still holds the reply's end
            chunks.append(chunk)
        assert upstream.released is True, "the pieces came as the upstream sent them, not once it had ended"
        parts = parts_of(chunks)
        assert "".join(p.text for p in parts if p.thought) == "Distances matter."
        assert "".join(p.text or "" for p in parts if not p.thought) == "Scale the features first."
        usage = chunks[-1].usage_metadata
        assert (usage.prompt_token_count, usage.cached_content_token_count, usage.candidates_token_count) == (30, 16, 8)


def test_count_tokens_and_errors(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["one"]), limits={"steps": 1}) as gateway:
        client = sdk(gateway)
        assert 0 < client.models.count_tokens(model="m", contents="hi").total_tokens < \
            client.models.count_tokens(model="m", contents="hi " * 100).total_tokens
        stranger = genai.Client(api_key="wrong", http_options=types.HttpOptions(
            base_url=gateway.base, retry_options=types.HttpRetryOptions(attempts=1)))
        with pytest.raises(errors.ClientError) as refused:
            stranger.models.generate_content(model="m", contents="hi")
        assert refused.value.code == 401
        with pytest.raises(errors.ClientError, match="googleSearch"):
            client.models.generate_content(model="m", contents="hi", config=types.GenerateContentConfig(
                tools=[types.Tool(google_search=types.GoogleSearch())]))
        client.models.generate_content(model="m", contents="hi")
        with pytest.raises(errors.ClientError) as limited:
            list(client.models.generate_content_stream(model="m", contents="again"))
        assert limited.value.code == 429 and limited.value.status == "RESOURCE_EXHAUSTED"
        assert [end.end_reason for end in gateway.ends] == ["steps_limit"]


def test_a_stalled_stream_ends_with_an_error_chunk_and_a_record(tmp_path):
    with stalling(tmp_path, warm_up) as gateway:
        client = sdk(gateway)   # held: a google-genai client closes its connections when collected
        with pytest.raises(errors.APIError, match="stalled"):
            list(client.models.generate_content_stream(model="m", contents="go"))


THOUGHT = [{"type": "thinking", "thinking": "Distances matter.", "signature": "sig-upstream-1"}]


@pytest.mark.parametrize("stream", [True, False])
def test_a_thought_signature_goes_out_and_comes_back_to_the_upstream(tmp_path, stream):
    """The upstream's reasoning blocks (with their signatures) reach the agent as a thought part and
    a thoughtSignature on the function call; sent back in the next turn (the thought parts left out,
    as Gemini CLI leaves them), they reach the upstream again."""
    reply = {"content": None, "reasoning_content": "Distances matter.", "thinking_blocks": THOUGHT,
             "tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "run_shell_command", "arguments": '{"command": "ls"}'}}]}
    # no stall time to speak of: the first streamed call of a process imports for seconds on a loaded machine
    with served_upstream(tmp_path, [reply, "Done."], stall_s=300) as (upstream, gateway):
        client = sdk(gateway)
        config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[SHELL])])
        if stream:
            chunks = list(client.models.generate_content_stream(model="gemini-3-pro", contents="Look.", config=config))
        else:
            chunks = [client.models.generate_content(model="gemini-3-pro", contents="Look.", config=config)]
        parts = parts_of(chunks)
        assert "".join(p.text for p in parts if p.thought) == "Distances matter."
        (call,) = [p for p in parts if p.function_call]
        assert call.thought_signature
        history = [types.Content(role="user", parts=[types.Part(text="Look.")]),
                   types.Content(role="model", parts=[call]),
                   types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
                       id=call.function_call.id, name="run_shell_command", response={"output": "total 0"}))])]
        assert client.models.generate_content(model="gemini-3-pro", contents=history, config=config).text == "Done."
        assistant = upstream.requests[1]["messages"][1]
        assert assistant["thinking_blocks"] == THOUGHT and assistant["reasoning_content"] == "Distances matter."
        assert "notes" not in gateway.exchange


def test_a_thought_signature_the_gateway_did_not_issue_is_dropped_with_a_note(tmp_path):
    with served(tmp_path, scripted_client(tmp_path, ["ok", "ok"])) as gateway:
        client = sdk(gateway)
        turns = [types.Content(role="user", parts=[types.Part(text="a")]),
                 types.Content(role="model", parts=[types.Part(text="b", thought_signature=b"another server's")]),
                 types.Content(role="user", parts=[types.Part(text="c")])]
        client.models.generate_content(model="m", contents=turns)
        assert gateway.exchange["messages"][1] == {"role": "assistant", "content": "b"}
        assert gateway.exchange["notes"] == ["contents[1].parts[0]: a thoughtSignature that this gateway did not "
                                             "issue was dropped"]
        turns[1].parts[0].thought_signature = b"skip_thought_signature_validator"  # Gemini CLI's placeholder
        client.models.generate_content(model="m", contents=turns)
        assert "notes" not in gateway.exchange
