"""Lazy re-exports: a subpackage names its public API in `__init__` without importing it.

A name is imported from its module on first use, so `import mlab.scoring` (or a module under it)
costs nothing more than the module asked for; heavy libraries stay with the commands that need them.
"""
from __future__ import annotations

import importlib
from typing import Callable


def exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, re-exporting `names` (name → module under package)."""

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(set(names) | set(importlib.import_module(package).__dict__))

    return __getattr__, __dir__
