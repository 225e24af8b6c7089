"""The one bounded JSON decoder: of what a model or a provider sends (mlab.models.decode sets its
bounds) and of what a run folder holds, which is read as hostile data.

Python's JSON decoder and encoder recurse once per level of nesting, so a value nested a few
thousand levels deep raises RecursionError wherever it is decoded, checked or written again. Every
decode therefore measures the nesting first (one regular-expression scan that visits only quotes,
escapes and brackets) and refuses a text past its bounds with `TooDeep` or `TooLarge` (both
ValueError).

A run folder may come from elsewhere (reproducing someone's run is what `--reproduce` is for), so
every JSON file the harness reads from one goes through `read_json`: the file is opened without
following a link and refused unless it is a regular file (a named pipe would block the reader
forever, a device never end), read up to a size bound, decoded within the nesting bound, and
checked against its schema in spec/ where one is named. Each refusal is an `UntrustedFile` whose
message names the file and what is wrong. The bounds are listed on docs/security.md.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from mlab.errors import MlabError
from mlab.standard_json import MAX_EXPORT_DEPTH

# A run folder's JSON documents (run.json, result.json, lock.json, budgets.json, probes/ files, the
# build copy's manifest): nested at most as deep as mlab itself writes (MAX_EXPORT_DEPTH) ...
MAX_FILE_DEPTH = MAX_EXPORT_DEPTH
# ... and at most this large (a lock of a build with many sources is a few megabytes).
MAX_FILE_BYTES = 256 << 20
# A trace or scores line, and a whole trace.
MAX_LINE_BYTES = 256 << 20
MAX_TRACE_BYTES = 8 << 30
MAX_NAMES = 1 << 30   # hard links are fine to read (a run folder copied with cp -al)
_STRUCTURE = re.compile(r"\\.|[\"'{}\[\]]", re.S)  # escapes, quotes and brackets: all the scan looks at


class TooDeep(ValueError):
    """A JSON text nested past its bound."""

    def __init__(self, depth: int, what: str = "the value", bound: int = MAX_FILE_DEPTH):
        super().__init__(f"{what} nests objects or lists {depth:,} levels deep; at most {bound} "
                         "levels are accepted")
        self.depth = depth


class TooLarge(ValueError):
    """A text longer than its bound."""

    def __init__(self, size: int, bound: int, what: str = "the value", unit: str = "characters"):
        super().__init__(f"{what} is {size:,} {unit} long, more than the {bound:,} accepted")
        self.size = size


class UntrustedFile(MlabError):
    """A file of a run folder that is not read: a link, a special file, too large, too deep, not
    JSON, or not of its schema. The message says which and why."""


def balanced(text: str, start: int, quotes: str = "\"'") -> tuple[str | None, int]:
    """The bracketed value starting at `start` (None if it is not closed), skipping brackets inside
    strings (quoted by any of `quotes`), and the deepest nesting seen. Only escapes, quotes and
    brackets are visited, so a long string costs one regular-expression scan."""
    depth, deepest, quote = 0, 0, None
    for match in _STRUCTURE.finditer(text, start):
        token = match.group()
        if quote:
            if token == quote:
                quote = None
            continue  # an escape or a bracket inside a string
        char = token[-1]  # outside a string a backslash escapes nothing: look at what follows it
        if char in quotes:
            quote = char
        elif char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start:match.end()], deepest
    return None, deepest


def nesting(text: str) -> int:
    """The deepest nesting of brackets outside JSON strings in `text` (0 for a scalar)."""
    start = re.search(r"[{\[]", text)
    return balanced(text, start.start(), quotes='"')[1] if start else 0


def loads(text: str | bytes, *, what: str = "the value", max_chars: int = MAX_FILE_BYTES,
          max_depth: int = MAX_FILE_DEPTH, **options):
    """json.loads of `text` after checking its size and nesting; TooLarge, TooDeep or ValueError."""
    if len(text) > max_chars:
        raise TooLarge(len(text), max_chars, what)
    if isinstance(text, bytes):
        text = text.decode("utf-8")  # UnicodeDecodeError is a ValueError
    # fewer brackets than the bound cannot nest past it: the check is needed only beyond
    if text.count("[") + text.count("{") <= max_depth:
        return json.loads(text, **options)
    if not options:
        # The C parser first (it stops a nesting past the interpreter's recursion limit with
        # RecursionError), then the depth of the value it made, which visits its lists and
        # objects only: scanning the text for brackets outside strings visited every escape
        # and quote of a long text (a trace record's prompt) in Python.
        try:
            value = json.loads(text)
        except RecursionError:
            raise TooDeep(nesting(text), what, max_depth) from None
        depth = value_depth(value)
        if depth > max_depth:
            raise TooDeep(depth, what, max_depth)
        return value
    depth = nesting(text)
    if depth > max_depth:
        raise TooDeep(depth, what, max_depth)
    return json.loads(text, **options)


def value_depth(value) -> int:
    """How deep lists and objects nest in a parsed JSON value (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def read_bytes(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file `path`, opened without following a link at its name and
    without blocking; UntrustedFile for a link, a special file or a file past `limit`,
    FileNotFoundError when there is none."""
    from mlab.confined import Refused, open_file

    path = Path(path)
    try:
        fd, info = open_file(path.parent, path.name, max_names=MAX_NAMES)
    except Refused as why:
        raise UntrustedFile(f"{path} is not read: {why}") from None
    with open(fd, "rb") as handle:
        if info.st_size > limit:
            raise UntrustedFile(f"{path} is not read: it holds {info.st_size:,} bytes, more than the {limit:,} "
                                "accepted")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UntrustedFile(f"{path} is not read: it holds more than the {limit:,} bytes accepted")
    return data


def _no_constant(name: str):
    raise ValueError(f"it holds {name}, which standard JSON has no value for (mlab writes it as the string \"{name}\")")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"it holds the number {text}, past what a float can hold")
    return value


def read_json(path: Path, *, schema: str | None = None, limit: int = MAX_FILE_BYTES, kind=dict):
    """The JSON document of a run folder's file `path`, read as hostile data (see the module's
    docstring): standard JSON (no NaN or Infinity, which mlab never writes), of type `kind` (None:
    any) and, where `schema` names one of spec/, valid against it.
    UntrustedFile naming the file and the problem; FileNotFoundError when there is none; OSError
    when it cannot be read."""
    path = Path(path)
    data = read_bytes(path, limit)
    try:
        document = loads(data, what=str(path), max_chars=limit, parse_constant=_no_constant, parse_float=_finite)
    except (TooDeep, TooLarge) as problem:
        raise UntrustedFile(str(problem)) from None
    except ValueError as problem:
        raise UntrustedFile(f"{path} is not JSON: {problem}") from None
    if kind is not None and not isinstance(document, kind):
        raise UntrustedFile(f"{path} is not a JSON {'object' if kind is dict else kind.__name__} "
                            f"(it holds a {type(document).__name__})")
    if schema is not None:
        from mlabc.schemas import problems

        found = problems(schema, document)
        if found:
            raise UntrustedFile(f"{path} does not match spec/{schema}.schema.json: " + "; ".join(found[:3]))
    return document
