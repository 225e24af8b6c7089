"""Values, names and the base of every entry: what the other node modules build on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import Span

__all__ = [
    'Value', 'Str', 'Int', 'Float', 'Duration', 'Size', 'Percent', 'Name', 'Npm', 'PythonVersion', 'List', 'Ident', 'Param', 'Entry',
]


def node(cls):
    """The class as a frozen dataclass. One without a docstring gets its name as one first: for
    such a class dataclasses writes the docstring from the class's signature with inspect, which
    was a tenth of importing this package (and so of a one-file `mlabc check`)."""
    if not cls.__doc__:
        cls.__doc__ = cls.__name__
    return dataclass(frozen=True)(cls)


# ---- values -------------------------------------------------------------

@node
class Value:
    span: Span
    kind: ClassVar[str] = "value"


@node
class Str(Value):
    value: str
    triple: bool = False
    indent: int = 0  # columns that dedenting removed, to map template columns back to the file
    kind: ClassVar[str] = "string"


@node
class Int(Value):
    value: int
    kind: ClassVar[str] = "integer"


@node
class Float(Value):
    value: float
    kind: ClassVar[str] = "number"


@node
class Duration(Value):
    seconds: float
    text: str
    kind: ClassVar[str] = "duration"


@node
class Size(Value):
    bytes: int
    text: str
    kind: ClassVar[str] = "size"


@node
class Percent(Value):
    fraction: float
    text: str
    kind: ClassVar[str] = "percentage"


@node
class Name(Value):
    value: str
    kind: ClassVar[str] = "name"


@node
class Npm(Value):
    """`npm "PACKAGE@VERSION"`: a package from the npm registry (an external agent's requirement)."""

    value: str
    kind: ClassVar[str] = "npm package"


@node
class PythonVersion(Value):
    """`python "3.12"`: the Python an external agent's environment is made with (in its requires)."""

    value: str
    kind: ClassVar[str] = "Python version"


@node
class List(Value):
    items: tuple[Value, ...]
    kind: ClassVar[str] = "list"


@node
class Ident:
    """A name in a fixed position (a declaration's name, a keyword argument)."""

    value: str
    span: Span


@node
class Param:
    """`name value` inside a metric's or a search's parameters."""

    name: Ident
    value: Value
    span: Span


# ---- entries ------------------------------------------------------------

@node
class Entry:
    """One keyword-led line of a block. `keyword` names it in diagnostics."""

    span: Span
    keyword: ClassVar[str] = ""
    repeatable: ClassVar[bool] = False
