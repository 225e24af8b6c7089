"""Reading a .mlab.yaml document's nodes: the strict composer and YamlReader's primitives.

ruamel.yaml composes the document (every node keeps its line and column); YamlReader checks
the shapes of its nodes and reports, in the codes .mlab uses (E100 syntax, E103 unknown keyword,
E302/E301 given twice, E107 missing value, E110 unknown declaration, E401 wrong type). Value
types that the checker already judges (a string where a duration belongs, ...) are passed on as
they are, so both forms get the same messages.
"""
from __future__ import annotations

import math
import re

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .. import ast as A
from ..diagnostics import Diagnostic, DiagnosticError, Span
from ..transform import ToAst
from ..units import DURATION_PATTERN, SIZE_PATTERN
from ..values import did_you_mean

YAML_SUFFIX = ".mlab.yaml"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*")
UNIT = {"duration": re.compile(DURATION_PATTERN),
        "size": re.compile(SIZE_PATTERN),
        "percent": re.compile(r"-?\d+(\.\d+)?%")}
TOP_KEYS = ("use", "tasks", "actions", "agents", "experiments")
_TAG = "tag:yaml.org,2002:"


def node_tag(node: Node) -> str:
    tag = str(getattr(node.tag, "value", node.tag) or "")
    return tag[len(_TAG):] if tag.startswith(_TAG) else tag


class YamlReader:
    """Builds the Module of one YAML document, collecting structural diagnostics."""

    def __init__(self, path: str, text: str):
        self.path, self.text = path, text
        self.lines = text.splitlines()
        self.diagnostics: list[Diagnostic] = []
        self._units = ToAst(path)  # the .mlab decoders of durations, sizes and percentages
        self._open: set[int] = set()

    # -- positions and reports --------------------------------------------
    def span(self, node: Node) -> Span:
        start, end = node.start_mark, node.end_mark
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            last = min(end.line, len(self.lines)) - 1  # the scalar ends on its last non-blank line
            while last > start.line and not self.lines[last].strip():
                last -= 1
            return Span(self.path, start.line + 1, start.column + 1, last + 1, len(self.lines[last]) + 1)
        if isinstance(node, (MappingNode, SequenceNode)) and node.value and not node.flow_style:
            last = node.value[-1][1] if isinstance(node, MappingNode) else node.value[-1]
            tail = self.span(last)  # a block collection ends with its last value, before any comment
            return Span(self.path, start.line + 1, start.column + 1, tail.end_line, tail.end_column)
        return Span(self.path, start.line + 1, start.column + 1, end.line + 1, end.column + 1)

    def entry_span(self, key: Node, value: Node) -> Span:
        head, tail = self.span(key), self.span(value)
        if node_tag(value) == "null":
            return head
        return Span(self.path, head.line, head.column, tail.end_line, tail.end_column)

    def error(self, code: str, message: str, node: Node | Span, hint: str | None = None) -> None:
        span = node if isinstance(node, Span) else self.span(node)
        self.diagnostics.append(Diagnostic(code, message, span, hint))

    # -- shapes -------------------------------------------------------------
    def standard_tag(self, node: Node) -> bool:
        tag = node_tag(node)
        if tag.startswith("!") or ":" in tag:
            self.error("E100", f"YAML tag {tag} is not used in mlab files", node, "remove the tag")
            return False
        return True

    def mapping(self, node: Node, where: str, duplicate_code: str = "E302") -> list[tuple[str, Node, Node]]:
        """(key, key node, value node) of a mapping; duplicates and non-string keys reported."""
        if not isinstance(node, MappingNode):
            self.wrong(node, where, "a mapping (key: value lines)")
            return []
        if not self.standard_tag(node):
            return []
        out, seen = [], {}
        for key, value in node.value:
            if not isinstance(key, ScalarNode) or node_tag(key) == "merge":
                self.error("E103", f"{where} cannot hold this key", key,
                           "keys are plain names; YAML merge keys (<<) and complex keys are not used")
                continue
            name = key.value
            if name in seen:
                what = "declared" if duplicate_code == "E301" else "given"
                self.error(duplicate_code, f"`{name}` is {what} twice in {where}", key,
                           f"the first is on line {seen[name] + 1}")
                continue
            seen[name] = key.start_mark.line
            out.append((name, key, value))
        return out

    def wrong(self, node: Node, where: str, expected: str) -> None:
        self.error("E401", f"{where} takes {expected}, not {self.describe(node)}", node)

    @staticmethod
    def describe(node: Node) -> str:
        if isinstance(node, MappingNode):
            return "a mapping"
        if isinstance(node, SequenceNode):
            return "a list"
        return {"null": "nothing", "bool": f"`{node.value}`", "int": f"the number {node.value}",
                "float": f"the number {node.value}"}.get(node_tag(node), f"the string {node.value!r}")

    def present(self, key: Node, value: Node, where: str) -> bool:
        if node_tag(value) == "null":
            self.error("E107", f"`{key.value}` needs a value here", key, "write the value after the colon")
            return False
        return True

    def fields(self, node: Node, where: str, handlers: dict, out: list) -> None:
        """Dispatch each key of a block to its handler; unknown keys are E103."""
        for name, key, value in self.mapping(node, where):
            handler = handlers.get(name)
            if handler is None:
                self.error("E103", f"unknown keyword `{name}` in {where}", key,
                           did_you_mean(name, handlers, "keywords"))
                continue
            if self.present(key, value, where):
                handler(name, key, value, out)

    # -- values -------------------------------------------------------------
    def value(self, node: Node, mode: str = "str", where: str | None = None) -> A.Value | None:
        """A YAML value as an AST value. mode: str, auto (units recognised), name (names unquoted)."""
        span = self.span(node)
        if not isinstance(node, ScalarNode) and not self.standard_tag(node):
            return None
        if isinstance(node, SequenceNode):
            if id(node) in self._open:
                self.error("E100", "this alias makes the list contain itself", node)
                return None
            self._open.add(id(node))
            items = [self.value(item, mode) for item in node.value]
            self._open.discard(id(node))
            return A.List(span, tuple(i for i in items if i is not None))
        if isinstance(node, MappingNode) and len(node.value) == 1 and isinstance(node.value[0][0], ScalarNode) \
                and node.value[0][0].value == "npm" and isinstance(node.value[0][1], ScalarNode) \
                and node_tag(node.value[0][1]) == "str":
            return A.Npm(span, node.value[0][1].value)  # {npm: "@openai/codex@0.171.0"}: an npm package
        if isinstance(node, MappingNode) and len(node.value) == 1 and isinstance(node.value[0][0], ScalarNode) \
                and node.value[0][0].value == "python" and isinstance(node.value[0][1], ScalarNode) \
                and node_tag(node.value[0][1]) == "str":
            return A.PythonVersion(span, node.value[0][1].value)  # {python: "3.12"}: the agent's Python
        if isinstance(node, MappingNode):
            what = f"{where} takes a single value or a list" if where else "expected a single value or a list here"
            self.error("E401", f"{what}, not a mapping", node)
            return None
        tag = node_tag(node)
        if tag == "int":
            return A.Int(span, _yaml_int(node.value))
        if tag == "float":
            number = _yaml_float(node.value)
            if not math.isfinite(number):
                self.error("E401", f"{node.value} is not a number mlab accepts", node)
                return None
            return A.Float(span, number)
        if tag == "bool":
            return A.Name(span, node.value.lower())
        if tag == "null":
            self.error("E107", "a value is missing here", node)
            return None
        if tag != "str":
            self.error("E100", f"YAML tag {tag} is not used in mlab files", node, "remove the tag")
            return None
        text = node.value
        if node.style is None and mode == "auto":
            for kind, pattern in UNIT.items():
                if pattern.fullmatch(text):
                    return getattr(self._units, kind)(None, _Token(text, span))
        if node.style is None and mode == "name" and NAME.fullmatch(text):
            return A.Name(span, text)
        block = node.style in ("|", ">")
        return A.Str(span, text, triple=block, indent=self._block_indent(node) if block else 0)

    def _block_indent(self, node: ScalarNode) -> int:
        for line in self.lines[node.start_mark.line + 1:]:
            if line.strip():
                return len(line) - len(line.lstrip(" "))
        return 0

    def ident(self, node: Node, where: str) -> A.Ident | None:
        if isinstance(node, ScalarNode) and node_tag(node) == "str" and NAME.fullmatch(node.value):
            return A.Ident(node.value, self.span(node))
        self.wrong(node, where, "a name (letters, digits, `_` and `-`)")
        return None

    def key_ident(self, name: str, key: Node, where: str) -> A.Ident | None:
        if NAME.fullmatch(name):
            return A.Ident(name, self.span(key))
        self.error("E401", f"{name!r} cannot be the name of {where}", key,
                   "a name is letters, digits, `_` and `-`, starting with a letter")
        return None

    def names(self, node: Node, where: str) -> list[A.Ident]:
        """One name or a list of names."""
        items = node.value if isinstance(node, SequenceNode) else [node]
        return [i for i in (self.ident(item, where) for item in items) if i is not None]

    def single(self, node: Node, where: str,
               expected: str = "a mapping (key: value lines)") -> tuple[str, Node, Node] | None:
        """The one key of a one-key mapping such as `from: {csv: data.csv}`; anything but a mapping
        is reported once, as `where` taking `expected`."""
        if not isinstance(node, MappingNode):
            self.wrong(node, where, expected)
            return None
        items = self.mapping(node, where)
        if len(items) != 1:
            if isinstance(node, MappingNode):
                self.error("E401", f"{where} takes a mapping with exactly one key", node)
            return None
        return items[0]


class _Token(str):
    """Stands in for a lark token where the .mlab decoders read one (text and position)."""

    def __new__(cls, text: str, span: Span):
        token = super().__new__(cls, text)
        token.line, token.column = span.line, span.column
        token.end_line, token.end_column = span.end_line, span.end_column
        return token


def _yaml_int(text: str) -> int:
    text = text.replace("_", "")
    if re.fullmatch(r"[-+]?0[oxOX][0-9a-fA-F]+", text):
        sign = -1 if text.startswith("-") else 1
        return sign * int(text.lstrip("+-"), 0)
    return int(text)


def _yaml_float(text: str) -> float:
    lowered = text.lower().replace("_", "")
    if lowered in (".inf", "+.inf", "-.inf", ".nan"):
        return math.nan
    return float(lowered)


def compose(text: str, path: str) -> Node | None:
    """The YAML node graph of a document, or DiagnosticError (E100) for invalid YAML."""
    try:
        return YAML(typ="rt").compose(text)
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        hint = "indent with spaces, and quote text that holds `: ` or starts with a special character"
        if "another document" in str(problem) or "another document" in str(error):
            problem, hint = "a .mlab.yaml file holds one YAML document (remove the `---` line)", None
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise DiagnosticError([Diagnostic("E100", f"invalid YAML: {problem}", Span(path, line, column),
                                          hint=hint)]) from None
