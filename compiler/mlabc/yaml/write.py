"""AST (+ placed comments) → the YAML form (`x.mlab.yaml`), the inverse of yaml_decls.

Each AST entry becomes a key of its block (entries that .mlab repeats by name are gathered
under one key); each value is written so that yaml_form reads back the very same AST value:
strings that YAML would read as something else are quoted, durations, sizes and percentages
are plain where the reader recognises them, text over several lines is a `|-` block.
Comments travel with the unit they were attached to.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode

from .. import ast as A
from ..comments import CommentMap, Note, children
from .reader import NAME, UNIT

WIDTH = 100
INDENT = "  "


class ConvertError(Exception):
    """The AST uses a construct that the YAML form cannot express (a message for the user)."""


# ---- the YAML tree ----------------------------------------------------------------

@dataclass
class Item:
    """`key: value` in a mapping, or `- value` in a list (key None), with its comments."""

    key: str | None
    value: object  # Scalar | Block | Seq | Map
    leading: list[Note] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    trailing: list[str] = field(default_factory=list)
    closing: list[Note] = field(default_factory=list)
    blank_before: bool = False


@dataclass
class Scalar:
    text: str
    flow_ok: bool = True  # may stand inside [...] or {...} (a plain string with a comma may not)


@dataclass
class Block:
    """A literal block scalar: its indicator (`|-`, `|2-`, ...) and its lines."""

    indicator: str
    lines: list[str]


@dataclass
class Seq:
    items: list[Item]


@dataclass
class Map:
    items: list[Item]
    block: bool = False  # always one key per line (the body of a declaration, variant, action, ...)


# ---- scalars ----------------------------------------------------------------------

_resolver = YAML(typ="rt").resolver
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _resolves_to_str(text: str) -> bool:
    return str(_resolver.resolve(ScalarNode, text, (True, False))).endswith(":str")


def _plain_ok(text: str, flow: bool) -> bool:
    if not text or text != text.strip() or text[0] in _INDICATORS or not text.isprintable():
        return False
    if ": " in text or " #" in text or text.endswith(":") or (flow and any(c in text for c in ",[]{}")):
        return False
    return _resolves_to_str(text)


def quoted(text: str) -> str:
    """A double-quoted YAML scalar (JSON escapes, which YAML shares; odd characters escaped)."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    return '"' + "".join(c if c.isprintable() or c in "\\" else f"\\u{ord(c):04x}" for c in body) + '"'


def key_text(key: str) -> str:
    return key if _plain_ok(key, flow=True) else quoted(key)


def string_scalar(value: str, mode: str, flow: bool) -> Scalar:
    plain = _plain_ok(value, flow)
    if plain and mode == "auto" and any(p.fullmatch(value) for p in UNIT.values()):
        plain = False
    if plain and mode == "name" and NAME.fullmatch(value):
        plain = False
    if not plain:
        return Scalar(quoted(value))
    return Scalar(value, flow_ok=flow or _plain_ok(value, flow=True))


def literal_block(value: str) -> Block | None:
    """`|-` block lines for a multi-line string, or None when a block would not read back exactly."""
    if value.endswith("\n") or not value.strip() or any(not (c.isprintable() or c in "\t\n") for c in value):
        return None
    lines = value.split("\n")
    first = next(line for line in lines if line.strip())
    indicator = "|2-" if first.startswith(" ") else "|-"  # YAML would take a leading space as indentation
    if any(line != line.rstrip() for line in lines) or "\t" in "".join(l[:1] for l in lines):
        return None
    return Block(indicator, lines)


def value_node(value: A.Value, mode: str, flow: bool = False):
    """The YAML value for an AST value read back by yaml_form in `mode` (str, auto or name)."""
    if isinstance(value, A.List):
        return Seq([Item(None, value_node(item, mode, flow=True)) for item in value.items])
    if isinstance(value, A.Str):
        if "\n" in value.value and not flow:
            block = literal_block(value.value)
            if block is not None:
                return block
        return string_scalar(value.value, mode, flow)
    if isinstance(value, (A.Duration, A.Size, A.Percent)):
        if mode != "auto":
            raise ConvertError(f"line {value.span.line}: {value.text} cannot stand here in the YAML form")
        return Scalar(value.text)
    if isinstance(value, A.Int):
        return Scalar(str(value.value))
    if isinstance(value, A.Float):
        return Scalar(repr(value.value))
    if isinstance(value, A.Name):
        if value.value in ("true", "false") or (mode == "name" and _plain_ok(value.value, flow)):
            return Scalar(value.value)
        raise ConvertError(f"line {value.span.line}: the name `{value.value}` cannot stand here in the YAML form")
    if isinstance(value, A.Npm):  # `npm "x@1"` is the mapping {npm: "x@1"} in the YAML form
        return Map([Item("npm", string_scalar(value.value, "str", True))])
    if isinstance(value, A.PythonVersion):  # `python "3.12"` is the mapping {python: "3.12"}
        return Map([Item("python", string_scalar(value.value, "str", True))])
    raise ConvertError(f"unexpected value {type(value).__name__}")


# ---- emitting -----------------------------------------------------------------------

def _flow(node, depth: int = 0) -> str | None:
    """The one-line form of a small list or mapping, or None when it needs lines.

    Flow style nests one level at most, and a mapping never holds a mapping there."""
    if isinstance(node, Scalar):
        return node.text if node.flow_ok else None
    if isinstance(node, (Seq, Map)):
        if depth > 1 or (isinstance(node, Map) and node.block):
            return None
        parts = []
        for item in node.items:
            if item.leading or item.header or item.trailing or item.closing:
                return None
            if isinstance(node, Map) and isinstance(item.value, Map):
                return None
            inner = _flow(item.value, depth + 1)
            if inner is None:
                return None
            parts.append(inner if item.key is None else f"{key_text(item.key)}: {inner}")
        return ("[" if isinstance(node, Seq) else "{") + ", ".join(parts) + ("]" if isinstance(node, Seq) else "}")
    return None


def _notes(notes: list[Note], lines: list[str], indent: str) -> None:
    for note in notes:
        if note.blank_before and lines and lines[-1] != "":
            lines.append("")
        lines.append(indent + note.text)


def emit_items(items: list[Item], indent: str, blank_between: bool = False) -> list[str]:
    lines: list[str] = []
    for i, item in enumerate(items):
        if i and blank_between and lines[-1] != "":
            lines.append("")
        _notes(item.leading, lines, indent)
        if item.blank_before and lines and lines[-1] != "":
            lines.append("")
        lines += emit_item(item, indent)
    return lines


def emit_item(item: Item, indent: str) -> list[str]:
    head = indent + (f"{key_text(item.key)}:" if item.key is not None else "-")
    node = item.value
    tail = ("  " + item.trailing[0]) if item.trailing else ""
    extra_trailing = [indent + INDENT + t for t in item.trailing[1:]]
    lines: list[str]
    if isinstance(node, Scalar):
        lines = [head + " " + node.text + tail]
        if item.header:
            lines[:0] = [indent + t for t in item.header]
    elif isinstance(node, Block):
        comment = ("  " + item.header[0]) if item.header else tail
        lines = [head + " " + node.indicator + comment]
        lines += [indent + INDENT + line if line else "" for line in node.lines]
        if item.header and item.trailing:
            extra_trailing.insert(0, indent + INDENT + item.trailing[0])
    else:
        flow = None if item.header or item.closing else _flow(node)
        if flow is not None and len(head) + 1 + len(flow) <= WIDTH:
            lines = [head + " " + flow + tail]
        else:
            lines = [head + (("  " + item.header[0]) if item.header else "")]
            lines += [indent + INDENT + t for t in item.header[1:]]
            lines += emit_items(node.items, indent + INDENT)
            _notes(item.closing, lines, indent + INDENT)
            if item.trailing:
                extra_trailing = [indent + INDENT + t for t in item.trailing]
    lines += extra_trailing
    if isinstance(node, (Scalar, Block)):  # comments that sat inside a one-line entry go below it
        _notes(item.closing, lines, indent)
    return lines


def emit_document(items: list[Item], header: list[Note], blank_after_header: bool = True) -> str:
    lines: list[str] = []
    _notes(header, lines, "")
    if lines and items and blank_after_header:
        lines.append("")
    body = emit_items(items, "", blank_between=True)
    lines += body
    return "\n".join(lines).rstrip("\n") + "\n" if lines else ""


# ---- comments of units ----------------------------------------------------------------

class Commented:
    """Makes Items for AST units, with the comments the CommentMap placed on them.

    Sub-units are turned into items before their parent, so when the parent's item is
    made, any comment of a sub-unit that found no item of its own goes after the parent."""

    def __init__(self, cmap: CommentMap):
        self.cmap = cmap
        self.consumed: set[int] = set()

    def item(self, key: str | None, value, unit=None) -> Item:
        item = Item(key, value)
        if unit is None:
            return item
        placed = self.cmap.of(unit)
        item.leading = list(placed.leading)
        item.header = list(placed.header)
        item.trailing = list(placed.trailing)
        item.closing = list(placed.closing)
        item.blank_before = self.cmap.blank_before(unit)
        self.consumed.add(id(unit))
        listed = _list_of(unit)
        if isinstance(value, Seq) and listed is not None:
            self._list_comments(value, listed, item)
        item.closing += self._orphans(unit)
        return item

    def _list_comments(self, seq: Seq, value: A.List, item: Item) -> None:
        placed = self.cmap.of(value)
        item.header += [note.text for note in placed.leading] + placed.header
        item.trailing += placed.trailing
        item.closing += placed.closing
        self.consumed.add(id(value))
        for sub, node in zip(seq.items, value.items):
            inner = self.cmap.of(node)
            sub.leading, sub.header = list(inner.leading), list(inner.header)
            sub.trailing, sub.closing = list(inner.trailing), list(inner.closing)
            self.consumed.add(id(node))

    def _orphans(self, unit) -> list[Note]:
        notes: list[Note] = []
        for kid in children(unit):
            if id(kid) not in self.consumed:
                self.consumed.add(id(kid))
                placed = self.cmap.of(kid)
                notes += placed.leading + [Note(t) for t in placed.header + placed.trailing] + placed.closing
            notes += self._orphans(kid)
        return notes


def _list_of(unit) -> A.List | None:
    kids = [k for k in children(unit) if isinstance(k, A.List)]
    return kids[0] if len(kids) == 1 and not isinstance(unit, A.List) else None

