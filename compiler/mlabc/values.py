"""Typed reading of AST values, reporting wrong types as diagnostics."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from .diagnostics import Diagnostic, Span
from .names import closest

_ARTICLES = {"integer": "an integer", "number": "a number", "string": "a string", "duration": "a duration",
             "size": "a size", "percentage": "a percentage", "name": "a name", "list": "a list",
             "npm package": "an npm package", "Python version": "a Python version"}


def describe(value: A.Value) -> str:
    if isinstance(value, A.Str):
        return f"the string {_short(value.value)}"
    if isinstance(value, A.Name):
        return f"the name `{value.value}`"
    if isinstance(value, A.List):
        return "a list"
    text = getattr(value, "text", None) or str(getattr(value, "value", ""))
    return f"{_ARTICLES[value.kind]} ({text})"


def _short(text: str) -> str:
    return repr(text if len(text) <= 30 else text[:27] + "...")


def did_you_mean(word: str, choices, what: str = "allowed") -> str:
    """A compiler diagnostic's hint: "did you mean `x`? (allowed: a, b, x)", or the list alone."""
    guess = closest(word, choices)
    listing = ", ".join(sorted(choices))
    return f"did you mean `{guess}`? ({what}: {listing})" if guess else f"{what}: {listing}"


@dataclass
class Reporter:
    """Collects diagnostics; the typed readers return None on a wrong type."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, message: str, span: Span | None, hint: str | None = None) -> None:
        self.diagnostics.append(Diagnostic(code, message, span, hint))

    def _wrong(self, value: A.Value, expected: str, where: str) -> None:
        self.error("E401", f"{where} takes {expected}, not {describe(value)}", value.span)

    def string(self, value: A.Value, where: str) -> str | None:
        if isinstance(value, A.Str):
            return value.value
        self._wrong(value, "a string", where)
        return None

    def name_or_string(self, value: A.Value, where: str) -> str | None:
        if isinstance(value, (A.Str, A.Name)):
            return value.value
        self._wrong(value, "a name or a string", where)
        return None

    def integer(self, value: A.Value, where: str, minimum: int | None = 0) -> int | None:
        if not isinstance(value, A.Int):
            self._wrong(value, "an integer", where)
            return None
        if minimum is not None and value.value < minimum:
            self.error("E405", f"{where} must be at least {minimum}, not {value.value}", value.span)
            return None
        return value.value

    def number(self, value: A.Value, where: str) -> float | None:
        if isinstance(value, (A.Int, A.Float)):
            return value.value
        self._wrong(value, "a number", where)
        return None

    def fraction(self, value: A.Value, where: str) -> float | None:
        """A share between 0 and 1, written 0.2 or 20%."""
        if isinstance(value, A.Percent):
            share = value.fraction
        elif isinstance(value, (A.Int, A.Float)):
            share = float(value.value)
        else:
            self._wrong(value, "a fraction (0.2) or a percentage (20%)", where)
            return None
        if not 0 < share < 1:
            self.error("E405", f"{where} must be between 0 and 1 (exclusive), not {share:g}", value.span)
            return None
        return share

    def percent(self, value: A.Value, where: str) -> float | None:
        if isinstance(value, A.Percent):
            return value.fraction
        self._wrong(value, "a percentage such as 10%", where)
        return None

    def duration(self, value: A.Value, where: str) -> float | None:
        if isinstance(value, A.Duration):
            return value.seconds
        self._wrong(value, "a duration such as 30m or 5h", where)
        return None

    def size(self, value: A.Value, where: str) -> int | None:
        if isinstance(value, A.Size):
            return value.bytes
        self._wrong(value, "a size such as 512MiB or 8GiB", where)
        return None

    def string_list(self, value: A.Value, where: str, names_ok: bool = False) -> list[str] | None:
        if not isinstance(value, A.List):
            self._wrong(value, "a list of strings", where)
            return None
        out: list[str] = []
        for item in value.items:
            if isinstance(item, A.Str) or (names_ok and isinstance(item, A.Name)):
                out.append(item.value)
            else:
                self._wrong(item, "strings" if not names_ok else "names or strings", f"the list of {where}")
        return out

    def choice(self, ident: A.Ident, allowed, where: str) -> str | None:
        if ident.value in allowed:
            return ident.value
        self.error("E405", f"{where} cannot be `{ident.value}`", ident.span, did_you_mean(ident.value, allowed))
        return None


def duplicate_entries(entries, reporter: Reporter, where: str) -> None:
    """Report entries that may appear once but appear again in the same block."""
    seen: dict[str, A.Entry] = {}
    for entry in entries:
        if entry.repeatable:
            continue
        if entry.keyword in seen:
            first = seen[entry.keyword].span
            reporter.error("E302", f"`{entry.keyword}` is given twice in {where}", entry.span,
                           hint=f"the first is on line {first.line}")
        else:
            seen[entry.keyword] = entry
