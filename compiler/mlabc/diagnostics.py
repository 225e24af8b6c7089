"""Diagnostics: what the compiler tells a user about their .mlab files.

A diagnostic has a code, a message, a location (file, line, column, end column)
and an optional hint. Rendering follows `path:line:col: error[CODE]: message`,
then the source line with carets, then the hint.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .codes import CODES


@dataclass(frozen=True)
class Span:
    """A region of a source file; lines and columns count from 1."""

    path: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None
    hint: str | None = None
    severity: str = "error"

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unregistered diagnostic code {self.code}")

    def sort_key(self) -> tuple:
        return self.span.sort_key() if self.span else ("", 0, 0)

    def to_json(self) -> dict:
        out = {"code": self.code, "severity": self.severity, "message": self.message, "hint": self.hint}
        if self.span:
            out.update(path=self.span.path, line=self.span.line, column=self.span.column,
                       end_line=self.span.end_line or self.span.line,
                       end_column=self.span.end_column or self.span.column + 1)
        return out


class DiagnosticError(Exception):
    """Raised to abandon a stage; carries the diagnostics found so far."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("\n".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class SourceCache:
    """Source texts by path, so rendering can show the offending line."""

    texts: dict[str, str] = field(default_factory=dict)

    def line(self, path: str, number: int) -> str | None:
        text = self.texts.get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            self.texts[path] = text
        lines = text.splitlines()
        return lines[number - 1] if 1 <= number <= len(lines) else None


def display_path(path: Path) -> str:
    """A path as users should see it: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def render(diag: Diagnostic, sources: SourceCache) -> str:
    """Render one diagnostic as text with the source line and a caret."""
    if diag.span is None:
        head = f"{diag.severity}[{diag.code}]: {diag.message}"
        return head + (f"\n  = hint: {diag.hint}" if diag.hint else "")
    span = diag.span
    head = f"{span.path}:{span.line}:{span.column}: {diag.severity}[{diag.code}]: {diag.message}"
    parts = [head]
    source_line = sources.line(span.path, span.line)
    if source_line is not None:
        shown = source_line.replace("\t", " ").replace("\x00", "\N{SYMBOL FOR NULL}")
        gutter = f"{span.line:>4} | "
        parts.append(gutter + shown)
        width = 1
        if span.end_line in (0, span.line) and span.end_column > span.column:
            width = span.end_column - span.column
        width = max(1, min(width, max(1, len(shown) - span.column + 1)))
        parts.append(" " * (len(gutter) - 2) + "| " + " " * (span.column - 1) + "^" * width)
    if diag.hint:
        parts.append(f"  = hint: {diag.hint}")
    return "\n".join(parts)


def render_all(diags: list[Diagnostic], sources: SourceCache) -> str:
    return "\n\n".join(render(d, sources) for d in diags)


def to_json(diags: list[Diagnostic]) -> str:
    return json.dumps({"diagnostics": [d.to_json() for d in diags],
                       "errors": sum(d.severity == "error" for d in diags)}, indent=2)


def decode_utf8(data: bytes, path: str) -> str:
    """A source file's text, or DiagnosticError E106 at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise DiagnosticError([Diagnostic(
            "E106", f"invalid UTF-8 byte 0x{data[error.start]:02x}", Span(path, line, column),
            hint="save the file as UTF-8")]) from None


def reject_nul(text: str, path: str) -> None:
    """DiagnosticError E105 at a source text's first NUL byte, if it has one.

    lark and ruamel.yaml would accept it inside strings and comments; it is never intended."""
    offset = text.find("\x00")
    if offset < 0:
        return
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    raise DiagnosticError([Diagnostic(
        "E105", "NUL byte (\\x00) in the file", Span(path, line, column, line, column + 1),
        hint="the file may be binary or damaged; delete the byte")])
