"""Reply parsing: labelled sections and JSON replies, leniently, with clear errors."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlab.agent.replies import ReplyError, parse_json_lenient, parse_reply
from mlab.documents.agent import Reply

SECTIONS = Reply.of({"format": "sections", "sections": [
    {"name": "Reflection", "kind": "text", "role": "reflection", "instruction": ""},
    {"name": "Thought", "kind": "text", "role": "thought", "instruction": ""},
    {"name": "Action", "kind": "action", "role": None, "instruction": ""},
    {"name": "Action Input", "kind": "json", "role": None, "instruction": ""}]})
JSON_FORMAT = Reply.of({"format": "json", "sections": [
    {"name": "thoughts.text", "kind": "text", "role": "thought", "instruction": ""},
    {"name": "command.name", "kind": "action", "role": None, "instruction": ""},
    {"name": "command.args", "kind": "json", "role": None, "instruction": ""}]})
ACTIONS = ["List Files", "Execute Script", "Edit Script (AI)", "Final Answer"]


def test_seed_style_reply():
    reply = parse_reply('Reflection: none yet\nThought: look around\nAction: List Files\n'
                        'Action Input: {"dir_path": "."}\n', SECTIONS, ACTIONS)
    assert reply.action == "List Files" and reply.action_input == {"dir_path": "."}
    assert reply.sections["Thought"] == "look around"


def test_markdown_headers_case_and_fences_are_tolerated():
    reply = parse_reply("**Reflection:** ok\n### Thought: go\n**Action:** execute script\n"
                        "Action Input:\n```json\n{'script_name': 'train.py',}\n```", SECTIONS, ACTIONS)
    assert reply.action == "Execute Script" and reply.action_input == {"script_name": "train.py"}


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ("{'a': True, 'b': None}", {"a": True, "b": None}),
    ('{"a": true, "b": null}', {"a": True, "b": None}),
    ('{"code": "line one\nline two"}', {"code": "line one\nline two"}),
    ('Here you go: {"x": "}"} and more text', {"x": "}"}),
])
def test_lenient_json(text, expected):
    assert parse_json_lenient(text) == expected


def test_unknown_action_gets_the_closest_name():
    with pytest.raises(ReplyError, match="'Execute Scrpt' is not an action.*Did you mean 'Execute Script'"):
        parse_reply("Thought: x\nAction: Execute Scrpt\nAction Input: {}", SECTIONS, ACTIONS)


def test_missing_sections_are_named():
    with pytest.raises(ReplyError, match="no 'Action Input:' line"):
        parse_reply("Thought: x\nAction: List Files\n", SECTIONS, ACTIONS)


def test_input_that_is_not_an_object_is_refused():
    with pytest.raises(ReplyError, match="JSON object"):
        parse_reply("Action: List Files\nAction Input: [1, 2]", SECTIONS, ACTIONS)
    with pytest.raises(ReplyError, match="not a valid JSON object"):
        parse_reply("Action: List Files\nAction Input: {oops", SECTIONS, ACTIONS)


def test_json_reply_with_dotted_fields():
    reply = parse_reply('Sure!\n{"thoughts": {"text": "hmm"}, "command": {"name": "Final Answer", '
                        '"args": {"final_answer": "done"}}}', JSON_FORMAT, ACTIONS)
    assert reply.action == "Final Answer" and reply.action_input == {"final_answer": "done"}
    assert reply.sections["thoughts.text"] == "hmm"


def test_json_reply_without_command_is_refused():
    with pytest.raises(ReplyError, match="no action name at 'command.name'"):
        parse_reply('{"thoughts": {"text": "hmm"}}', JSON_FORMAT, ACTIONS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_replies_never_crash(text):
    for fmt in (SECTIONS, JSON_FORMAT):
        try:
            reply = parse_reply(text, fmt, ACTIONS)
        except ReplyError as error:
            assert str(error)
        else:
            assert reply.action in ACTIONS and isinstance(reply.action_input, dict)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(ACTIONS), st.dictionaries(st.text(min_size=1, max_size=10), st.text(max_size=30), max_size=3),
       st.text(max_size=80))
def test_well_formed_replies_round_trip(action, payload, thought):
    import json
    thought = thought.replace("\r", " ").replace("\n", " ")
    text = f"Thought: {thought}\nAction: {action}\nAction Input: {json.dumps(payload)}"
    reply = parse_reply(text, SECTIONS, ACTIONS)
    assert reply.action == action and reply.action_input == payload


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": [1, -Infinity]}', '{"x": 1e999}', "{'x': 1e999}"])
def test_an_input_holding_nan_or_an_infinity_is_a_format_error(text):
    with pytest.raises(ReplyError, match="holds NaN or an infinite number"):
        parse_json_lenient(text)
