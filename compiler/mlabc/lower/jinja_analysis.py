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


# --- every field read checked against the context's shape -------------------------------------

Problem = tuple[int | None, str, tuple[str, ...]] | None  # (line, attribute, the object's fields) or None


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


def shape_of(description: str) -> tuple[str, tuple[str, ...]] | None:
    """("object", fields) or ("list", each item's fields) for a template-context.json description
    of an object or a list of objects; None for a value whose shape it does not spell out."""
    text = description.strip()
    if text.startswith("object:"):
        return "object", tuple(_split_fields(text[len("object:"):]))
    if text.startswith("list of objects:"):
        return "list", tuple(_split_fields(text[len("list of objects:"):]))
    return None


@functools.cache
def _code_digest() -> bytes:
    """This module's code: a changed check looks at every template afresh."""
    return hashlib.sha256(Path(__file__).read_bytes()).digest()


def shape_problem(text: str, context: dict[str, str]) -> Problem:
    """(line, attribute, the object's fields) of the first field `text` reads that its object does
    not have; None when every read is of a catalogued field. Every branch counts, taken or not (an
    `{% if %}`, an `{% else %}`, a loop's body): the template's syntax tree is walked, each
    `object.field` (or `object["field"]`) of a context object, or of a loop's item over a list of
    objects, checked against the catalogue's fields. Kept in the user cache beside the analyses."""
    key = hashlib.sha256(_code_digest() + ("shape\0" + json.dumps(context, sort_keys=True) + "\0" + text)
                         .encode("utf-8", "surrogatepass")).hexdigest()
    entry = _stored(_store_path()).get(key)
    if isinstance(entry, list) and entry[:1] == ["shape"]:
        return None if entry[1] is None else (entry[1][0], entry[1][1], tuple(entry[1][2]))
    import jinja2

    try:
        tree = _environment().parse(text)
    except jinja2.TemplateSyntaxError:
        return None  # E601 says why
    shapes = {name: shape for name, description in context.items() if (shape := shape_of(description))}
    found = _first_problem(tree, shapes)
    _save(key, ["shape", None if found is None else [found[0], found[1], list(found[2])]])
    return found


def _first_problem(tree, shapes: dict) -> Problem:
    from jinja2 import nodes

    # a name the template binds itself ({% set %}, a macro's argument, {% with %}) is its own value
    bound = {n.name for kind in (nodes.Assign, nodes.AssignBlock, nodes.Macro, nodes.With, nodes.CallBlock)
             for node in tree.find_all(kind) for n in node.find_all(nodes.Name) if n.ctx in ("store", "param")}
    scope = {name: shape for name, shape in shapes.items() if name not in bound}
    problems: list = []

    def read(node, scope) -> None:
        if isinstance(node, nodes.Test) and node.name in ("defined", "undefined"):
            return  # `task.x is defined` asks; it reads nothing
        if isinstance(node, nodes.For):
            read(node.iter, scope)
            inner = dict(scope)
            targets = [node.target] if isinstance(node.target, nodes.Name) else node.target.find_all(nodes.Name)
            for name in targets:
                inner.pop(name.name, None)
            listed = scope.get(node.iter.name) if isinstance(node.iter, nodes.Name) else None
            if isinstance(node.target, nodes.Name) and listed is not None and listed[0] == "list":
                inner[node.target.name] = ("object", listed[1])
            for child in [*node.body, *([node.test] if node.test is not None else [])]:
                read(child, inner)
            for child in node.else_:
                read(child, scope)
            return
        field = None
        if isinstance(node, nodes.Getattr):
            field = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            field = node.arg.value
        if field is not None and isinstance(node.node, nodes.Name) and not field.startswith("__"):
            shape = scope.get(node.node.name)
            if shape is not None and shape[0] == "object" and field not in shape[1]:
                problems.append((node.lineno, field, shape[1]))
        for child in node.iter_child_nodes():
            read(child, scope)

    read(tree, scope)
    return min(problems, key=lambda p: p[0] or 0) if problems else None
