"""Place a file's comments against the layout of its AST, so that printers keep them.

The formatter and the converter print an AST again, in .mlab or in YAML, and must put
every comment back near what it described. Each comment is attached to one layout unit
(a declaration, an entry, a list item, ...): before it (`leading`), at the end of its
first line (`header`), at the end of its last line (`trailing`), or after its last
child, before it closes (`closing`). Units and comments are compared by line only, so
the same placement works for an AST read from a .mlab file and one read from YAML.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from . import ast as A


@dataclass(frozen=True)
class Note:
    """One comment as printed: its text (with `#`) and whether a blank line preceded it."""

    text: str
    blank_before: bool = False


@dataclass
class Placed:
    leading: list[Note] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    trailing: list[str] = field(default_factory=list)
    closing: list[Note] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.leading or self.header or self.trailing or self.closing)


@dataclass(frozen=True)
class SourceComment:
    """A comment of the source: position, text, and whether code precedes it on its line."""

    line: int
    column: int
    text: str
    after_code: bool


def children(node) -> list:
    """The layout units directly inside `node`, in source order."""
    if isinstance(node, A.Module):
        return sorted([*node.uses, *node.decls], key=lambda n: (n.span.line, n.span.column))
    if isinstance(node, A.Decl):
        return list(node.entries)
    if isinstance(node, (A.Data, A.Action, A.ExpOverride)):
        return list(node.entries)
    if isinstance(node, A.Respond):
        return sorted([*node.sections, *node.settings], key=lambda u: (u.span.line, u.span.column))
    if isinstance(node, (A.Prompts, A.Limits, A.Hardware, A.Search, A.Changes)):
        return list(node.items)
    if isinstance(node, A.Model):
        return list(node.params)
    if isinstance(node, A.Submission) and node.rules:  # its `column` lines, after the columns list
        return [*([node.columns] if isinstance(node.columns, A.List) else []), *node.rules]
    if isinstance(node, A.List):
        return list(node.items)
    if dataclasses.is_dataclass(node):
        return [getattr(node, f.name) for f in dataclasses.fields(node)
                if isinstance(getattr(node, f.name), A.List)]
    return []


def _first_line(node) -> int:
    return node.span.line


def _last_line(node) -> int:
    return node.span.end_line or node.span.line


class CommentMap:
    """Where each comment goes, by unit; built once per file."""

    def __init__(self, module: A.Module, comments: list[SourceComment], source: str,
                 also_blank: set[int] = frozenset()):
        self.blank_lines = {number for number, text in enumerate(source.splitlines(), start=1)
                            if not text.strip()} | set(also_blank)
        self._placed: dict[int, Placed] = {}
        self._keep: list = []  # placed nodes, so their ids stay unique while the map lives
        self.root = module
        self._place(module, sorted(comments, key=lambda c: (c.line, c.column)), top=True)

    # -- queries --------------------------------------------------------
    def of(self, node) -> Placed:
        return self._placed.get(id(node)) or Placed()

    def blank_before(self, node) -> bool:
        """Was there an empty line right above the unit (below its leading comments)?"""
        return (node.span.line - 1) in self.blank_lines

    def has_inside(self, node) -> bool:
        """Does any comment sit inside the unit (not counting its leading and trailing ones)?"""
        placed = self.of(node)
        if placed.header or placed.closing:
            return True
        return any(self.of(kid) or self.has_inside(kid) for kid in children(node))

    # -- placement ------------------------------------------------------
    def _get(self, node) -> Placed:
        if id(node) not in self._placed:
            self._placed[id(node)] = Placed()
            self._keep.append(node)
        return self._placed[id(node)]

    def _note(self, comment: SourceComment) -> Note:
        return Note(comment.text, (comment.line - 1) in self.blank_lines)

    def _place(self, node, comments: list[SourceComment], top: bool = False) -> None:
        if not comments:
            return
        kids = children(node)
        inside: dict[int, list[SourceComment]] = {}
        for comment in comments:
            if not top and comment.after_code and comment.line == _last_line(node):
                self._get(node).trailing.append(comment.text)
                continue
            kid = next((k for k in kids if _first_line(k) <= comment.line <= _last_line(k)), None)
            if kid is not None:
                inside.setdefault(id(kid), []).append(comment)
                continue
            following = next((k for k in kids if _first_line(k) > comment.line), None)
            if comment.after_code and not top and (following is kids[0] if kids else comment.line == _first_line(node)):
                self._get(node).header.append(comment.text)
            elif following is not None:
                self._get(following).leading.append(self._note(comment))
            else:
                self._get(node).closing.append(self._note(comment))
        for kid in kids:
            self._place(kid, inside.get(id(kid), []))


def source_comments(comments, source: str) -> list[SourceComment]:
    """Parser comments (line, column, text) → SourceComment, noting code before them on their line."""
    lines = source.splitlines()
    out = []
    for comment in comments:
        before = lines[comment.line - 1][: comment.column - 1] if comment.line <= len(lines) else ""
        out.append(SourceComment(comment.line, comment.column, comment.text, bool(before.strip())))
    return out
