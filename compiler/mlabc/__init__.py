"""mlabc: the compiler of the .mlab language (parse → check → lower → emit).

Its public API (docs/api.md), each name loaded on first use so that `import mlabc` costs nothing:
`check_paths` and `compile_paths` (check `.mlab` files, and write their build), `render_all`
(diagnostics as the command prints them), `PathsError` and `BuildWriteError` (what they raise).
Every other name is imported from the module that defines it.
"""
from __future__ import annotations

__version__ = "0.1.0"

# name → the module under mlabc that defines it
_API = {"check_paths": "api", "compile_paths": "api", "PathsError": "api", "render_all": "diagnostics",
        "BuildWriteError": "resources"}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'mlabc' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"mlabc.{_API[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
