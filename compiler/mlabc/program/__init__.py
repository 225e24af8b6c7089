"""A program: the `.mlab` files and everything they `use`, loaded, checked and built.

loader.py reads the files (the YAML form through yaml/), check.py resolves and checks the
declarations through lower/, emit.py writes the build. The names below are imported on first
use, so that reading a file's suffix does not load the checker.
"""
from __future__ import annotations

from mlabc.lazy import lazy_exports

__all__ = ["BuildWriteError", "Compiled", "Program", "check_program", "expand_paths", "load_program", "plan_build",
           "write_build"]

_EXPORTS = {
    "Program": "loader", "expand_paths": "loader", "load_program": "loader",
    "Compiled": "check", "check_program": "check",
    "BuildWriteError": "emit", "plan_build": "emit", "write_build": "emit",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
