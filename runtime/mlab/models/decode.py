"""The one bounded JSON decoder of what a model or a provider sends: replies, tool-call arguments,
provider response bodies and what the trace keeps of them.

Python's JSON decoder and encoder recurse once per level of nesting, so a value nested a few
thousand levels deep raises RecursionError wherever it is decoded, checked or written again. Every
decode of model or provider output therefore measures the nesting first (one regular-expression
scan that visits only quotes, escapes and brackets) and refuses a text past the bounds below with
mlab.bounded_json's `TooDeep` or `TooLarge` (both ValueError), which callers turn into a format error the agent is
told about or a provider error. The bounds are listed on docs/security.md.
"""
from __future__ import annotations

import math

from mlab.bounded_json import loads as bounded_loads  # the one bounded decoder (run folders use it too)
from mlab.standard_json import MAX_JSON_DEPTH  # nesting deeper is refused everywhere (replies, arguments, bodies, exports)

# The longest reply text parsed at all; room for a Write File of a few tens of megabytes.
MAX_REPLY_CHARS = 64 << 20
# The longest arguments of one tool call; a bigger file is written in parts (Append File).
MAX_ARGUMENT_CHARS = 16 << 20
# The longest file of replies or demonstration steps read (a user's or a task's file: nesting is bounded).
FILE_CHARS = 1 << 30
# The most bytes read of one provider response (headers and body, after decompression).
MAX_RESPONSE_BYTES = 96 << 20

# What the HTTP transport puts in place of tool-call arguments past the bounds (mlab.models.transport).
REFUSED_PREFIX = "mlab refused these arguments: "


def loads(text: str, *, what: str = "the value", max_chars: int = MAX_REPLY_CHARS, **options):
    """json.loads of what a model or provider sent, after checking its size and nesting (at most
    MAX_JSON_DEPTH levels); TooLarge, TooDeep or ValueError."""
    return bounded_loads(text, what=what, max_chars=max_chars, max_depth=MAX_JSON_DEPTH, **options)


def has_non_finite(value, depth: int = 0) -> bool:
    """Whether a decoded value (nested at most MAX_JSON_DEPTH deep, as `loads` leaves it) holds NaN or an
    infinity: Python's JSON reads `NaN`, `Infinity` and `1e999`, which standard JSON has no value for."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if depth > MAX_JSON_DEPTH + 1:
        return False
    if isinstance(value, dict):
        return any(has_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_non_finite(v, depth + 1) for v in value)
    return False


def object_arguments(text) -> dict | None:
    """A tool call's arguments as the object they encode, or None when they are not a JSON object
    within the bounds (a hostile or cut reply)."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str):
        return None
    try:
        value = loads(text, what="the arguments", max_chars=MAX_ARGUMENT_CHARS)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def refusal_text(problem: str) -> str:
    return REFUSED_PREFIX + problem


def refusal(arguments) -> str | None:
    """What the transport refused of a tool call's arguments, or None when they are the model's own."""
    if isinstance(arguments, str) and arguments.startswith(REFUSED_PREFIX):
        return arguments[len(REFUSED_PREFIX):]
    return None
