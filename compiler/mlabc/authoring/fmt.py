"""`mlabc fmt`: rewrite .mlab files in the canonical layout, keeping their comments.

Formatting never changes what a file means: the text is printed from the AST
(mlab_print), parsed again and compared with the original AST before anything is
written; a difference is a formatter bug and is reported, not written.
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path

from .. import ast as A
from ..comments import CommentMap, source_comments
from ..diagnostics import Diagnostic, DiagnosticError
from .printer import Unprintable, print_module
from ..parser import parse_bytes, parse_text

SUFFIX = ".mlab"
_LAYOUT_ONLY = {"span", "triple", "indent"}  # fields that record how a value was written, not what it is


def ast_shape(node):
    """The AST as nested tuples without positions and quoting: equal shapes mean equal meaning."""
    if isinstance(node, (list, tuple)):
        return tuple(ast_shape(item) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        values = tuple((f.name, ast_shape(getattr(node, f.name))) for f in dataclasses.fields(node)
                       if f.name not in _LAYOUT_ONLY and f.name != "path")
        return (type(node).__name__,) + values
    return node


def format_text(text: str, path: str) -> str:
    """The canonical text of a .mlab source; raises DiagnosticError when it does not parse."""
    comments: list = []
    module = parse_text(text, path, comments)
    return _print_checked(module, comments, text, path)


def format_bytes(data: bytes, path: str) -> str:
    comments: list = []
    module = parse_bytes(data, path, comments)
    text = data.decode("utf-8").lstrip("\ufeff")
    return _print_checked(module, comments, text, path)


class FormatterBug(Exception):
    """The printed text would not mean what the source meant (never written to disk)."""


def _print_checked(module: A.Module, comments: list, text: str, path: str) -> str:
    cmap = CommentMap(module, source_comments(comments, text), text)
    try:
        out = print_module(module, cmap)
    except Unprintable as error:
        raise FormatterBug(f"{path}: {error}") from None
    again: list = []
    try:
        reparsed = parse_text(out, path, again)
    except DiagnosticError as error:
        raise FormatterBug(f"{path}: the formatted text does not parse: {error}") from None
    if ast_shape(reparsed) != ast_shape(module):
        raise FormatterBug(f"{path}: formatting would change the meaning of the file")
    if sorted(c.text for c in again) != sorted(c.text for c in comments):
        raise FormatterBug(f"{path}: formatting would lose or change a comment")
    return out


@dataclass
class FormatReport:
    """What `mlabc fmt` did or would do."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)


def mlab_files(paths: list[str]) -> tuple[list[Path], list[str]]:
    """The .mlab files named or under the folders named; and names that do not exist."""
    files, missing = [], []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files += sorted(p for p in path.rglob(f"*{SUFFIX}") if p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            missing.append(name)
    return files, missing


def format_files(files: list[Path], write: bool, want_diff: bool = False) -> FormatReport:
    """Format each file; write the changed ones when `write`."""
    report = FormatReport()
    for file in files:
        shown = str(file)
        try:
            data = file.read_bytes()
            formatted = format_bytes(data, shown)
        except DiagnosticError as error:
            report.diagnostics += error.diagnostics
            continue
        except FormatterBug as bug:
            report.failures.append(str(bug))
            continue
        except OSError as error:
            report.failures.append(f"cannot read {shown}: {error.strerror or error}")
            continue
        original = data.decode("utf-8")
        if formatted == original:
            report.unchanged.append(shown)
            continue
        report.changed.append(shown)
        if want_diff:
            report.diffs[shown] = "".join(difflib.unified_diff(
                original.splitlines(keepends=True), formatted.splitlines(keepends=True),
                fromfile=shown, tofile=f"{shown} (formatted)"))
        if write:
            try:
                file.write_text(formatted, encoding="utf-8")
            except OSError as error:
                report.failures.append(f"cannot write {shown}: {error.strerror or error}")
    return report
