"""The YAML form of .mlab (`x.mlab.yaml`) → the same AST as the .mlab text would give.

The document is read strictly: ruamel.yaml composes it (every node keeps its line
and column; reader.py) and decls.py builds the AST itself, so duplicate keys, unknown keys,
missing values and wrong shapes become diagnostics at the offending key or value, in
the codes .mlab uses. The shape of the form is in spec/yaml-form.schema.json (written by
schema.py).
"""
from __future__ import annotations

import re

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .. import ast as A
from ..diagnostics import Diagnostic, DiagnosticError, decode_utf8, reject_nul
from ..parser import Comment
from .decls import read_module
from .reader import YamlReader, compose


def parse_yaml_text(text: str, path: str, comments: list | None = None) -> A.Module:
    """The AST of a .mlab.yaml document, or DiagnosticError with every structural problem.

    When `comments` is a list, the document's comments are appended to it (parser.Comment)."""
    reject_nul(text, path)
    root = compose(text, path)
    reader = YamlReader(path, text)
    module = read_module(reader, root)
    if reader.diagnostics:
        raise DiagnosticError(sorted(reader.diagnostics, key=Diagnostic.sort_key))
    if comments is not None:
        comments.extend(yaml_comments(text, root))
    return module


def yaml_comments(text: str, root: Node | None) -> list:
    """The `# ...` comments of a YAML text: a `#` at a line's start or after a space,
    outside quoted and block scalars."""
    inside: list[tuple[tuple[int, int], tuple[int, int]]] = []
    stack, seen = [root] if root is not None else [], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style in ('"', "'"):
                inside.append(((node.start_mark.line, node.start_mark.column),
                               (node.end_mark.line, node.end_mark.column)))
            elif node.style in ("|", ">"):  # the text starts below the indicator, which a comment may follow
                inside.append(((node.start_mark.line + 1, 0), (node.end_mark.line, node.end_mark.column)))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack += [key, value]
    out = []
    for number, line in enumerate(text.splitlines()):
        for match in re.finditer(r"(?:^|(?<=[ \t]))#", line):
            where = (number, match.start())
            if not any(start <= where < end for start, end in inside):
                out.append(Comment(number + 1, match.start() + 1, line[match.start():].rstrip()))
                break
    return out


def parse_yaml_bytes(data: bytes, path: str) -> A.Module:
    """Decode (UTF-8, located diagnostic otherwise) and read a .mlab.yaml file."""
    return parse_yaml_text(decode_utf8(data, path).lstrip("\ufeff"), path)
