"""Handlers shared by the blocks of the YAML form: one key → one AST entry or a small mapping of parts."""
from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, Node

from .. import ast as A
from ..values import did_you_mean
from .reader import YamlReader


def one_value(r: YamlReader, cls, mode: str = "str"):
    """key: value → cls(span, value)."""
    def handle(name, key, value, out):
        v = r.value(value, mode, f"`{name}`")
        if v is not None:
            out.append(cls(r.entry_span(key, value), v))
    return handle


def ident_entry(r: YamlReader, cls):
    def handle(name, key, value, out):
        ident = r.ident(value, f"`{name}`")
        if ident is not None:
            out.append(cls(r.entry_span(key, value), ident))
    return handle


def parts_of(r: YamlReader, node: Node, where: str, allowed: dict[str, str], required=()) -> dict | None:
    """A small mapping of named parts: part name → AST value (mode per part), Ident (mode 'ident') or
    the YAML node itself (mode 'node')."""
    if not isinstance(node, MappingNode):
        return None
    parts: dict = {}
    for name, key, value in r.mapping(node, where):
        mode = allowed.get(name)
        if mode is None:
            r.error("E103", f"unknown keyword `{name}` in {where}", key, did_you_mean(name, allowed, "keywords"))
        elif r.present(key, value, where):
            parts[name] = (r.ident(value, f"`{name}`") if mode == "ident" else value if mode == "node"
                           else r.value(value, mode))
    for name in required:
        if name not in parts:
            r.error("E308", f"{where} needs `{name}`", node)
            return None
    return parts


def key_values(r: YamlReader, node: Node, where: str) -> list[A.Limit]:
    items = []
    for name, key, value in r.mapping(node, where):
        if not r.present(key, value, where):
            continue
        ident = r.key_ident(name, key, f"a setting of {where}")
        v = r.value(value, "auto")
        if ident is not None and v is not None:
            items.append(A.Limit(ident, v, r.entry_span(key, value)))
    return items


def limits_entry(r: YamlReader):
    def handle(name, key, value, out):
        out.append(A.Limits(r.entry_span(key, value), tuple(key_values(r, value, "`limits`"))))
    return handle
