"""The machinery of the document views (mlab.documents): `View.of(document)` builds a view from a
validated document, each field's value converted by its annotation, worked out once per class: a
view class, `tuple[X, ...]` (from a list), `Mapping[str, X]` (from an object, read-only),
`X | None`, a plain str/int/float/bool, or `object` for a value the schema leaves open (a
primitive's parameters), frozen into tuples and read-only dicts. `thaw` gives a view back as the
JSON data it was made from, for writing it out or hashing it.
"""
from __future__ import annotations

import typing
from collections.abc import Mapping
from types import UnionType
from typing import Any


class FrozenDict(dict):
    """A read-only dict: a JSON object of a document (it pickles, and json writes it as a dict)."""

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        raise TypeError("a compiled document's view is read-only")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return FrozenDict, (dict(self),)

    def __hash__(self):
        return hash(tuple(sorted(self.items())))


EMPTY = FrozenDict()   # the default of an object property a document leaves out


def freeze(value: Any) -> Any:
    """A JSON value made read-only: objects as read-only dicts, arrays as tuples."""
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A view or frozen value back as plain JSON data (dicts and lists), for writing it out or
    hashing it: a view made by `of` gives back its document exactly."""
    if isinstance(value, View):
        # the keys its document had, written back as they were; a view made in code (a default)
        # gives the fields it sets to other than their defaults
        present = getattr(value, "_present", None)
        out = {}
        for name in value.FIELDS:
            key, item = value.KEYS.get(name, name), getattr(value, name)
            if (key in present) if present is not None else item != value.DEFAULTS.get(name, _REQUIRED):
                out[key] = thaw(item)
        return out
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


_REQUIRED = object()


def _same(value: Any) -> Any:
    return value


def _converter(hint: Any):
    """How a document value becomes the value of a field annotated `hint`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        if len(kept) != 1:
            return freeze  # e.g. `int | float`: a plain value either way
        inner = _converter(kept[0])
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        item = _converter(args[0])
        return lambda value: tuple(item(entry) for entry in value)
    if origin is Mapping:
        item = _converter(args[1])
        return lambda value: FrozenDict({key: item(entry) for key, entry in value.items()})
    if isinstance(hint, type) and issubclass(hint, View):
        return hint.of
    if hint in (str, int, float, bool):
        return _same
    return freeze  # object: a value the schema leaves open


_OWN = ("KEYS", "FIELDS", "DEFAULTS")   # what every view class has, not fields


class _Fields(type):
    """Makes each annotated name of a view class a slot, its value in the class body its default.

    (A plain metaclass rather than dataclasses: forty frozen dataclasses cost `mlab list` and
    `mlab run` about 30 ms of start-up in generated code; these classes cost none.)"""

    def __new__(mcls, name: str, bases: tuple, namespace: dict):
        fields = tuple(name for name in namespace.get("__annotations__", {}) if name not in _OWN)
        defaults = {field: namespace.pop(field) for field in fields if field in namespace}
        namespace["__slots__"] = (*namespace.get("__slots__", ()), *fields)
        cls = super().__new__(mcls, name, bases, namespace)
        cls.FIELDS, cls.DEFAULTS = fields, defaults
        return cls


def _rebuild(cls, values: dict, present):
    made = cls(**values)
    if present is not None:
        object.__setattr__(made, "_present", present)
    return made


class View(metaclass=_Fields):
    """The base of every document view: a frozen record of the fields its class annotates, built
    by `of` from a validated document. KEYS names a field's document key where it is not the
    field's name (a Python keyword)."""

    __slots__ = ("_present",)   # the keys of the document it was made from (for `thaw`)
    KEYS: dict[str, str] = {}
    FIELDS: tuple[str, ...]
    DEFAULTS: dict[str, Any]

    def __init__(self, *args, **kwargs):
        if len(args) > len(self.FIELDS):
            raise TypeError(f"{type(self).__name__} takes {len(self.FIELDS)} fields, not {len(args)}")
        values = dict(zip(self.FIELDS, args))
        for name, value in kwargs.items():
            if name not in self.FIELDS or name in values:
                raise TypeError(f"{type(self).__name__} has no field {name!r}" if name not in self.FIELDS
                                else f"{type(self).__name__} got {name!r} twice")
            values[name] = value
        for name in self.FIELDS:
            if name not in values:
                if name not in self.DEFAULTS:
                    raise TypeError(f"{type(self).__name__} needs its field {name!r}")
                values[name] = self.DEFAULTS[name]
            object.__setattr__(self, name, values[name])

    @classmethod
    def of(cls, document: Mapping):
        plan = cls.__dict__.get("_plan")
        if plan is None:
            hints = typing.get_type_hints(cls)
            plan = tuple((name, cls.KEYS.get(name, name), _converter(hints[name])) for name in cls.FIELDS)
            type.__setattr__(cls, "_plan", plan)
        made = cls(**{name: convert(document[key]) for name, key, convert in plan if key in document})
        object.__setattr__(made, "_present", frozenset(document))
        return made

    def __setattr__(self, name, value):
        raise AttributeError(f"a view of a compiled document is read-only: {type(self).__name__}.{name}")

    __delattr__ = __setattr__

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    def __hash__(self):
        return hash((type(self), *(getattr(self, n) for n in self.FIELDS)))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.FIELDS)})"

    def __reduce__(self):   # pickled whole, with the keys its document had (a scoring child gets views)
        values = {name: getattr(self, name) for name in self.FIELDS}
        return _rebuild, (type(self), values, getattr(self, "_present", None))


def replace(made: View, **changes) -> View:
    """A copy of a view with some fields changed (made in code: it has no document's keys)."""
    return type(made)(**{name: changes.get(name, getattr(made, name)) for name in made.FIELDS}, **{
        name: value for name, value in changes.items() if name not in made.FIELDS})
