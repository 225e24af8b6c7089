"""Operator replies and reviews as models write them, and as they should not."""
from __future__ import annotations

import pytest

from mlab.agent.replies import ReplyError
from mlab.search.operators import parse_operator_reply, parse_review


def test_the_plan_is_the_prose_before_the_one_python_block():
    text = "Use ridge.\nThe error was:\n```\nKeyError: 'x'\n```\nSo:\n```python\nprint(1)\n```\n"
    assert parse_operator_reply(text) == ("Use ridge.\nThe error was:\n```\nKeyError: 'x'\n```\nSo:", "print(1)\n")
    assert parse_operator_reply("Plan.\n```py\nx = 1\n```") == ("Plan.", "x = 1\n")


@pytest.mark.parametrize("text, problem", [
    ("Just a plan, no code.", "no ```python code block"),
    ("A.\n```python\na = 1\n```\nB.\n```python\nb = 2\n```", "2 ```python code blocks; give exactly one"),
    ("Empty.\n```python\n\n```", "code block is empty"),
])
def test_replies_without_exactly_one_usable_block_are_format_errors(text, problem):
    with pytest.raises(ReplyError, match=problem.replace("(", r"\(")):
        parse_operator_reply(text)


def test_reviews_are_checked_field_by_field():
    assert parse_review('```json\n{"is_bug": "false", "metric": "0.25", "summary": "ok"}\n```') == {
        "is_bug": False, "metric": 0.25, "summary": "ok"}
    for text, problem in [('{"metric": 1}', "is_bug must be true or false"),
                          ('{"is_bug": false, "metric": "high"}', "metric must be a number or null"),
                          ('{"is_bug": false, "metric": NaN}', "finite number"),
                          ("no json", "not a JSON object")]:
        with pytest.raises(ReplyError, match=problem):
            parse_review(text)


def _operations(function, *args) -> int:
    """Python lines run plus calls made (Python and C) while function(*args) runs: its work."""
    import sys

    count = 0

    def trace(frame, event, arg):
        nonlocal count
        count += 1
        return trace

    def profile(frame, event, arg):
        nonlocal count
        count += event in ("call", "c_call")

    sys.settrace(trace)
    sys.setprofile(profile)
    try:
        function(*args)
    except ReplyError:
        pass
    finally:
        sys.setprofile(None)
        sys.settrace(None)
    return count


def test_a_reply_full_of_unclosed_fences_is_refused_in_work_linear_in_its_size():
    def reply(lines: int) -> str:
        return "```python\n" + "```py fence\n" * lines  # one fence opened, never closed

    with pytest.raises(ReplyError, match="no ```python code block"):
        parse_operator_reply(reply(1_000))

    small, large = _operations(parse_operator_reply, reply(1_000)), _operations(parse_operator_reply, reply(8_000))
    assert small <= 20 * 1_000 and large <= 8.5 * small, (small, large)  # operations grow with the size, no faster
    # the time inside C calls (which no operation count sees): bench/inputs.py
