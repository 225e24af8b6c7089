"""Lazy re-exports: a package names its public API without importing the modules behind it.

A name is imported from its module on first use, so importing the package costs only what it
asks for: `mlabc check` does not pay for the authoring tools, and the runtime's start-up does not
pay for the compiler. The runtime's subpackages use the same function.
"""
from __future__ import annotations

import importlib
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing anything at start-up
if TYPE_CHECKING:
    from collections.abc import Callable


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, re-exporting `names` (name → module under package,
    e.g. "schemas" or "authoring.printer")."""

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(set(names) | set(importlib.import_module(package).__dict__))

    return __getattr__, __dir__
