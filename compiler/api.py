"""The library behind the CLI: check and compile paths."""
from __future__ import annotations

from pathlib import Path

from .check import Compiled, check_program
from .loader import expand_paths, load_program
from .resources import tasks_dir


class PathsError(Exception):
    """Named paths that do not exist (an I/O error for the CLI)."""


def default_paths() -> list[str]:
    """tasks/ of the working directory when there is one, else the bundled tasks."""
    return ["tasks"] if Path("tasks").is_dir() else [str(tasks_dir())]


def check_paths(paths: list[str] | None = None) -> Compiled:
    files, missing = expand_paths(paths or default_paths())
    if missing:
        raise PathsError("no such file or folder: " + ", ".join(missing))
    if not files:
        raise PathsError("no .mlab files under " + ", ".join(paths or default_paths()))
    return check_program(load_program(files))


def compile_paths(paths: list[str] | None, out: Path) -> tuple[Compiled, dict | None]:
    """Check, and write the build when there are no errors (the manifest is returned)."""
    from .emit import write_build

    compiled = check_paths(paths)
    if not compiled.ok:
        return compiled, None
    return compiled, write_build(compiled, out)
