"""mlab: the runtime that executes compiled mlab builds.

Its public API (docs/api.md), each name loaded on first use so that `import mlab` costs nothing:
`run_task` (run a task as `mlab run` does), `load_run` and `LoadedRun` (read a run folder),
`MlabEnv` (a task as a Gymnasium environment) and `MlabError` (what every refusal raises).
Every other name is imported from the module that defines it.
"""
from __future__ import annotations

__version__ = "0.1.0"

# name → the module under mlab that defines it
_API = {"run_task": "api", "load_run": "reports.runs", "LoadedRun": "reports.runs", "MlabEnv": "gym.env",
        "MlabError": "errors"}
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'mlab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"mlab.{_API[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
