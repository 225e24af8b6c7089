"""Whatever an agent sends, each dialect's parser either makes a request of it or says what is wrong
(BadRequest, the dialect's 400): never another exception, which would be the gateway's 500."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mlab.external.dialects import Ask, BadRequest, anthropic, chat, gemini, responses

KEYS = ["model", "messages", "system", "tools", "tool_choice", "input", "instructions", "contents", "role",
        "content", "type", "text", "name", "id", "input_schema", "parameters", "call_id", "arguments", "output",
        "tool_use_id", "source", "parts", "functionCall", "functionResponse", "args", "response", "summary",
        "systemInstruction", "functionDeclarations", "toolConfig", "functionCallingConfig", "mode", "stream",
        "thinking", "signature", "is_error", "inlineData", "disable_parallel_tool_use", "image_url",
        "encrypted_content", "thoughtSignature"]
WORDS = ["user", "assistant", "model", "system", "developer", "text", "image", "tool_use", "tool_result",
         "thinking", "message", "function_call", "function_call_output", "reasoning", "custom", "function",
         "auto", "any", "tool", "none", "ANY", "NONE", "OBJECT", "base64", "url", "input_text", "custom_tool_call",
         "compaction", "compaction_trigger", "redacted_thinking"]
values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(WORDS) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=30)
objects = st.dictionaries(st.sampled_from(KEYS), values, max_size=5)
blocks = st.fixed_dictionaries({"type": st.sampled_from(WORDS)}, optional={
    "text": values, "id": values, "name": values, "input": values, "tool_use_id": values, "content": values,
    "source": objects, "thinking": values, "call_id": values, "arguments": values, "output": values,
    "summary": values, "role": st.sampled_from(WORDS), "encrypted_content": values})
parts = st.fixed_dictionaries({}, optional={"text": values, "thought": values, "functionCall": objects,
                                            "thoughtSignature": values,
                                            "functionResponse": objects, "inlineData": objects, "fileData": values})
turns = st.lists(st.fixed_dictionaries({}, optional={
    "role": st.sampled_from(["user", "assistant", "model", "system", "developer", "tool"]) | values,
    "content": st.text(max_size=3) | st.lists(blocks, max_size=3) | values, "parts": st.lists(parts, max_size=3),
    "type": st.sampled_from(WORDS), "call_id": values, "name": values, "arguments": values, "output": values,
    "summary": values, "encrypted_content": values}),
    min_size=1, max_size=4)
bodies = values | st.fixed_dictionaries({}, optional={
    "messages": turns, "input": turns | values, "contents": turns, "tools": st.lists(objects, max_size=3),
    "system": values, "instructions": values, "tool_choice": values | objects, "toolConfig": objects,
    "systemInstruction": values | objects, "model": values})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies)
@example(body={"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": 5}]})
@example(body={"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
               "tools": [{"functionDeclarations": [{"name": "f"}]}],
               "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": 7}}})
@example(body={"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b",
                                                              "input": [1, {"x": None}]}]},
                            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                                          "content": [{"type": "image", "source": 3}]}]}],
               "input": [{"type": "function_call", "call_id": "c", "name": "d", "arguments": {"x": 1}},
                         {"type": "reasoning", "summary": [3, {"text": None}]},
                         {"role": "assistant", "content": [{"type": "input_image", "image_url": "u"}]}]})
@example(body={"messages": [{"role": "user", "content": []}]})  # no message left once parsed
@example(body={"input": [{"type": "reasoning", "summary": 5, "encrypted_content": {"x": 1}},
                         {"type": "compaction", "encrypted_content": 3}, {"type": "compaction_trigger"}],
               "contents": [{"role": "model", "parts": [{"text": "a", "thoughtSignature": {"x": 1}}]}],
               "systemInstruction": [{"text": True}]})
def test_every_dialect_makes_a_request_or_says_what_is_wrong(body):
    compact = lambda body: responses.parse(body, compact=True)  # noqa: E731 - POST /v1/responses/compact
    for parse in (chat.parse, anthropic.parse, responses.parse, compact, gemini.parse):
        try:
            ask = parse(body)
        except BadRequest as problem:
            assert str(problem)
            continue
        assert isinstance(ask, Ask) and isinstance(ask.messages, list) and ask.messages
        json.dumps(ask.messages)  # what the model client sends and the trace records
