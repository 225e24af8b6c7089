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

import itertools
import json
import operator
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
        return json.loads(text, **options) if options else _plain_loads(text)
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


_SCAN = json.JSONDecoder().scan_once   # what json.loads runs, without the layers around it
_JSON_SPACE = " \t\n\r"


def _plain_loads(text: str):
    """json.loads(text): the value its own scanner reads, where that is the whole text but JSON's
    white space, in a third of the time (a report decodes a row of scores per step of every run);
    for anything else json.loads itself, and its error."""
    body = text.strip(_JSON_SPACE)
    try:
        value, end = _SCAN(body, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    return value if end == len(body) else json.loads(text)


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
    from mlab.confined import Refused, open_named

    path = path if isinstance(path, Path) else Path(path)   # (a report reads five files a run)
    try:
        fd, info = open_named(path, max_names=MAX_NAMES)
    except Refused as why:
        raise UntrustedFile(f"{path} is not read: {why}") from None
    with open(fd, "rb") as handle:
        if info.st_size > limit:
            raise UntrustedFile(f"{path} is not read: it holds {info.st_size:,} bytes, more than the {limit:,} "
                                "accepted")
        # as much as fstat said, plus one byte to see a file that grew since: read(limit + 1)
        # would first allocate the limit, a few hundred megabytes, for a file of a few kilobytes
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
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
    path = path if isinstance(path, Path) else Path(path)
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


# -- the shape of a record ------------------------------------------------------------------------
# A trace or scores line is checked against its schema in spec/ by a check compiled from it once
# (shape_check): each key's JSON type, what is required, the enums, patterns and minimums, and the
# same of what it holds, so a reader can use a record's fields without checking each one. Running
# jsonschema on every line would cost about 25 times as much (14 us a record) (mlab report reads every line of
# every run's trace); what this leaves out (additionalProperties: false, minLength) no reader relies on.

_TYPES = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
          "boolean": (bool,), "null": (type(None),)}
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
               bool: "a boolean", type(None): "null"}


class _Shape:
    __slots__ = ("types", "expected", "enum", "pattern", "minimum", "properties", "required", "additional", "items",
                 "prefix", "min_items", "max_items")

    def __init__(self):
        self.types = self.expected = self.enum = self.pattern = self.minimum = self.additional = self.items = None
        self.properties, self.required, self.prefix = {}, (), ()
        self.min_items = self.max_items = None


def _compile(schema: dict, defs: dict) -> _Shape:
    """One _Shape of a schema: its alternatives (oneOf, anyOf) merged, which is exact for spec/'s
    schemas, whose alternatives differ in type (null or an object)."""
    shape = _Shape()
    parts = [schema, *schema.get("oneOf", ()), *schema.get("anyOf", ())]
    types: set = set()
    names: list = []
    anything = False
    for part in parts:
        if "$ref" in part:
            part = defs[part["$ref"].rsplit("/", 1)[-1]]
        if "type" in part:
            for name in [part["type"]] if isinstance(part["type"], str) else part["type"]:
                types.update(_TYPES[name])
                names.append(name)
        elif "enum" in part:
            shape.enum = frozenset(part["enum"])
            types.update(type(value) for value in part["enum"])
        elif part is not schema or not ("oneOf" in part or "anyOf" in part):
            anything = True  # {} or a schema that constrains no type: any value
        if "pattern" in part:
            shape.pattern = re.compile(part["pattern"])
        if "minimum" in part:
            shape.minimum = part["minimum"]
        if part.get("properties"):
            shape.properties = {key: _compile(sub, defs) for key, sub in part["properties"].items()}
        if part.get("required"):
            shape.required = tuple(part["required"])
        if isinstance(part.get("additionalProperties"), dict):
            shape.additional = _compile(part["additionalProperties"], defs)
        if isinstance(part.get("items"), dict):
            shape.items = _compile(part["items"], defs)
        if part.get("prefixItems"):
            shape.prefix = tuple(_compile(sub, defs) for sub in part["prefixItems"])
        shape.min_items = part.get("minItems", shape.min_items)
        shape.max_items = part.get("maxItems", shape.max_items)
    if float in types or int in types:
        types.add(int)
    shape.types = None if anything or not types else tuple(types)
    shape.expected = " or ".join(dict.fromkeys(names)) or \
        "one of " + ", ".join(sorted(map(repr, shape.enum or ())))
    return shape


def _kind(value) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _problem(shape: _Shape, value, where: str) -> str | None:
    """What is wrong with `value` at `where` (None when nothing is)."""
    types = shape.types
    if types is not None and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
        return f"{where} is {_kind(value)}, not {shape.expected}"
    if shape.enum is not None and value not in shape.enum:
        return f"{where} is {value!r}, not one of {', '.join(sorted(map(repr, shape.enum)))}"
    if type(value) is dict:
        for key in shape.required:
            if key not in value:
                return f"{where}.{key} is missing" if where else f"it has no {key}"
        for key, item in value.items():
            sub = shape.properties.get(key, shape.additional)
            if sub is not None:
                found = _problem(sub, item, f"{where}.{key}" if where else key)
                if found:
                    return found
    elif type(value) is list:
        if shape.min_items is not None and len(value) < shape.min_items:
            return f"{where} holds {len(value)} items, fewer than {shape.min_items}"
        if shape.max_items is not None and len(value) > shape.max_items:
            return f"{where} holds {len(value)} items, more than {shape.max_items}"
        for index, item in enumerate(value):
            sub = shape.prefix[index] if index < len(shape.prefix) else shape.items
            if sub is not None:
                found = _problem(sub, item, f"{where}[{index}]")
                if found:
                    return found
    elif type(value) is str:
        if shape.pattern is not None and not shape.pattern.search(value):
            return f"{where} is not of the form {shape.pattern.pattern}"
    elif shape.minimum is not None and type(value) in (int, float) and value < shape.minimum:
        return f"{where} is {value}, below {shape.minimum}"
    return None


_SHAPES: dict[str, _Shape] = {}


def _shape(schema: str) -> _Shape:
    shape = _SHAPES.get(schema)
    if shape is None:
        from mlabc.resources import data_dir

        document = json.loads((data_dir("spec") / f"{schema}.schema.json").read_text(encoding="utf-8"))
        shape = _SHAPES[schema] = _compile(document, document.get("$defs", {}))
    return shape


def shape_problem(schema: str, record) -> str | None:
    """Why `record` is not of the shape spec/<schema>.schema.json describes (e.g. 'model.calls[0].cost
    is a string'), None when it is: the cheap structural check of each line of a trace or of
    scores.jsonl (see above)."""
    shape = _shape(schema)
    if type(record) is not dict:
        return f"it is {_kind(record)}, not an object"
    return _problem(shape, record, "")


def shapes_fit(schema: str, records: list) -> bool:
    """Whether shape_problem(schema, ...) finds nothing in any of `records`: the same checks made a
    field at a time across all of them, a few passes over a column in C where the walk of each
    record costs microseconds in Python (a run's scores.jsonl holds a row per step, and a report
    reads thousands of runs). Where it says False, shape_problem of each record says which and why."""
    shape = _shape(schema)
    if not set(map(type, records)) <= {dict}:
        return False
    for key in set(shape.required).union(*records):
        try:
            column = list(map(operator.itemgetter(key), records))
        except KeyError:   # not in every record
            if key in shape.required:
                return False
            column = [record[key] for record in records if key in record]
        sub = shape.properties.get(key, shape.additional)
        if sub is not None and not _column_fits(sub, column):
            return False
    return True


def _column_fits(shape: _Shape, values: list) -> bool:
    """Whether _problem finds nothing in any of `values` (a field of many records)."""
    if (shape.enum is not None or shape.properties or shape.required or shape.additional is not None
            or shape.items is not None or shape.prefix or shape.min_items is not None or shape.max_items is not None):
        return all(_problem(shape, value, "") is None for value in values)   # a nested shape: value by value
    types, kinds = shape.types, set(map(type, values))
    if types is not None and any(not issubclass(kind, types) or (issubclass(kind, bool) and bool not in types)
                                 for kind in kinds):
        return False
    if shape.pattern is not None and not all(shape.pattern.search(text)
                                             for text in {value for value in values if type(value) is str}):
        return False
    if shape.minimum is not None:
        numbers = values if kinds <= {int, float} else [value for value in values if type(value) in (int, float)]
        return not any(map(operator.lt, numbers, itertools.repeat(shape.minimum)))   # as _problem: NaN passes
    return True
