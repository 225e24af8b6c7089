"""Values, names and the base of every entry: what the other node modules build on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import Span

__all__ = [
    'Value', 'Str', 'Int', 'Float', 'Duration', 'Size', 'Percent', 'Name', 'List', 'Ident', 'Param', 'Entry',
]


# ---- values -------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    span: Span
    kind: ClassVar[str] = "value"


@dataclass(frozen=True)
class Str(Value):
    value: str
    triple: bool = False
    indent: int = 0  # columns that dedenting removed, to map template columns back to the file
    kind: ClassVar[str] = "string"


@dataclass(frozen=True)
class Int(Value):
    value: int
    kind: ClassVar[str] = "integer"


@dataclass(frozen=True)
class Float(Value):
    value: float
    kind: ClassVar[str] = "number"


@dataclass(frozen=True)
class Duration(Value):
    seconds: float
    text: str
    kind: ClassVar[str] = "duration"


@dataclass(frozen=True)
class Size(Value):
    bytes: int
    text: str
    kind: ClassVar[str] = "size"


@dataclass(frozen=True)
class Percent(Value):
    fraction: float
    text: str
    kind: ClassVar[str] = "percentage"


@dataclass(frozen=True)
class Name(Value):
    value: str
    kind: ClassVar[str] = "name"


@dataclass(frozen=True)
class List(Value):
    items: tuple[Value, ...]
    kind: ClassVar[str] = "list"


@dataclass(frozen=True)
class Ident:
    """A name in a fixed position (a declaration's name, a keyword argument)."""

    value: str
    span: Span


@dataclass(frozen=True)
class Param:
    """`name value` inside a metric's or a search's parameters."""

    name: Ident
    value: Value
    span: Span


# ---- entries ------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One keyword-led line of a block. `keyword` names it in diagnostics."""

    span: Span
    keyword: ClassVar[str] = ""
    repeatable: ClassVar[bool] = False
