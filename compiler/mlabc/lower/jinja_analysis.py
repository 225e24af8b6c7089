"""What a Jinja template uses: its undeclared variables, or its syntax error; once per distinct text.

The agents of a program share most of their templates (every std agent's), and analysing a
template means importing Jinja and compiling it. Each distinct text is analysed once per
process, and the answers are kept in the user cache ($MLAB_CACHE/mlabc) under the template's
digest and the installed Jinja's identity, so a later `mlabc check` of unchanged templates
neither imports Jinja nor parses them. Without a usable cache folder every text is analysed.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from pathlib import Path

from ..resources import cache_root, store_in_cache

Analysis = frozenset[str] | tuple[int | None, str]  # the variables used, or (line, message) of the syntax error
_KEEP = 5000  # entries the cache file keeps at most (those used by this process first)


@functools.cache
def _jinja_identity() -> str | None:
    """The installed Jinja's file, size and time, without importing it."""
    spec = importlib.util.find_spec("jinja2")
    if spec is None or not spec.origin:
        return None
    try:
        stat = os.stat(spec.origin)
    except OSError:
        return None
    return hashlib.sha256(f"{spec.origin}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:16]


def _store_path() -> Path | None:
    identity = _jinja_identity()
    return cache_root() / "mlabc" / f"jinja-analysis-{identity}.json" if identity else None


@functools.lru_cache(maxsize=8)
def _stored(path: Path | None) -> dict[str, list]:
    try:
        found = json.loads(path.read_bytes()) if path else {}
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _decode(entry) -> Analysis | None:
    if isinstance(entry, list) and len(entry) == 2 and entry[0] == "uses" and isinstance(entry[1], list):
        return frozenset(map(str, entry[1]))
    if isinstance(entry, list) and len(entry) == 3 and entry[0] == "error" and isinstance(entry[2], str):
        return (entry[1] if isinstance(entry[1], int) else None, entry[2])
    return None


@functools.lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """The variables `text` uses, or (line, message) of its Jinja syntax error."""
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    known = _decode(_stored(_store_path()).get(key))
    if known is not None:
        return known
    import jinja2
    from jinja2 import meta

    try:
        # compiling for the analysis also finds unknown filters and tests (TemplateAssertionError)
        found: Analysis = frozenset(meta.find_undeclared_variables(_environment().parse(text)))
        entry = ["uses", sorted(found)]
    except jinja2.TemplateSyntaxError as error:
        found = (error.lineno, error.message)
        entry = ["error", error.lineno, error.message]
    _save(key, entry)
    return found


@functools.cache
def _environment():
    import jinja2

    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)


def _save(key: str, entry: list) -> None:
    path = _store_path()
    stored = _stored(path)
    stored[key] = entry
    if path is None:
        return
    if len(stored) > _KEEP:
        for old in list(stored)[: len(stored) - _KEEP]:
            del stored[old]
    try:
        data = json.dumps(stored).encode()
    except ValueError:
        return  # not JSON-able: analysed again next time
    store_in_cache(path, data)


# --- rendering with a full context of the right shape ------------------------------------------

Rendered = tuple[int | None, str, tuple[str, ...]] | None  # (line, attribute, the object's fields) or None


class _Leaf(str):
    """A value of the sample context whose shape the catalogue does not spell out: anything may be
    done with it (an attribute, a call, a loop, arithmetic), so only the shape around it is checked."""

    def __getattr__(self, name: str) -> "_Leaf":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Leaf("x")

    def __call__(self, *args, **kwargs) -> "_Leaf":
        return _Leaf("x")

    def __iter__(self):
        return iter(())

    def _any(self, *args) -> "_Leaf":
        return _Leaf("x")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = __mod__ = _any

    def __eq__(self, other) -> bool:  # a branch guarded by a comparison is rendered too
        return True

    def __ne__(self, other) -> bool:
        return False

    __hash__ = str.__hash__


class ShapeError(Exception):
    def __init__(self, name: str, fields: tuple[str, ...]):
        super().__init__(name)
        self.name, self.fields = name, fields


class _Object:
    """An object of the sample context: its catalogued fields, and nothing else."""

    def __init__(self, fields: dict):
        self.__dict__["_fields"] = fields

    def __getattr__(self, name: str):
        fields = self.__dict__["_fields"]
        if name in fields:
            return fields[name]
        if name.startswith("__"):
            raise AttributeError(name)
        raise ShapeError(name, tuple(fields))

    def __getitem__(self, name):
        return self.__getattr__(name)

    def __iter__(self):
        return iter(self.__dict__["_fields"])


def _split_fields(text: str) -> list[str]:
    """The field names of "name, title (the task's), usage (JSON text), ...": top-level commas."""
    names, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += char
    names.append(current)
    return [n.split("(")[0].strip() for n in names if n.split("(")[0].strip()]


def sample_value(description: str):
    """A value of the shape a template-context.json description gives."""
    text = description.strip()
    if text.startswith("object:"):
        return _Object({name: _Leaf("x") for name in _split_fields(text[len("object:"):])})
    if text.startswith("list of objects:"):
        return [_Object({name: _Leaf("x") for name in _split_fields(text[len("list of objects:"):])})]
    if text.startswith("list"):
        return [_Leaf("x")]
    if text.startswith("int"):
        return 1
    return _Leaf("x")


@functools.cache
def _code_digest() -> bytes:
    """This module's code: a changed sample context renders every template afresh."""
    return hashlib.sha256(Path(__file__).read_bytes()).digest()


def render_problem(text: str, context: dict[str, str]) -> Rendered:
    """(line, attribute, the object's fields) of the first attribute `text` reads that its object
    does not have, rendered under StrictUndefined with a context of the described shape; None when
    it renders. Kept in the user cache beside the analyses."""
    key = hashlib.sha256(_code_digest() + ("render\0" + json.dumps(context, sort_keys=True) + "\0" + text)
                         .encode("utf-8", "surrogatepass")).hexdigest()
    entry = _stored(_store_path()).get(key)
    if isinstance(entry, list) and entry[:1] == ["rendered"]:
        return None if entry[1] is None else (entry[1][0], entry[1][1], tuple(entry[1][2]))
    found: Rendered = None
    try:
        template = _environment().from_string(text)
        template.render({name: sample_value(description) for name, description in context.items()})
    except ShapeError as error:
        found = (_template_line(error), error.name, error.fields)
    except Exception:  # noqa: BLE001 - anything else is a runtime value, not a shape, question
        found = None
    _save(key, ["rendered", None if found is None else [found[0], found[1], list(found[2])]])
    return found


def _template_line(error: BaseException) -> int | None:
    line, trace = None, error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<template>":
            line = trace.tb_lineno
        trace = trace.tb_next
    return line
