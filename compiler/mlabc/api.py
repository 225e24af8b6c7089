"""Checking and compiling `.mlab` files from a program (and the library behind `mlabc check` and
`mlabc compile`): `check_paths`, `compile_paths`, `default_paths`, `PathsError`. `mlabc` exports
them, with the rest of its public API (docs/api.md).

The runtime uses this module, `mlabc.data_model`, and the kernel modules that hold a rule both
halves follow (`resources`, `units`, `names`, `literals`, `cli_start`, `schemas`, `diagnostics`);
tests/test_layers.py keeps it to those.
"""
from __future__ import annotations

from pathlib import Path
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a tenth of `mlab --help`)

if TYPE_CHECKING:
    from .program.check import Compiled


class PathsError(Exception):
    """Named paths that do not exist (an I/O error for the CLI)."""


def default_paths() -> list[str]:
    """tasks/ of the working directory when there is one, else the bundled tasks."""
    from .resources import tasks_dir

    return ["tasks"] if Path("tasks").is_dir() else [str(tasks_dir())]


def check_paths(paths: list[str] | None = None, data: bool = False) -> Compiled:
    """The checked program (a `Compiled`) of the `.mlab` files at `paths` (default: default_paths());
    with `data`, every task's declarations are checked against its data model too (what
    `mlabc check` does; a build leaves it to the runtime's preparation)."""
    from .program.check import check_program
    from .program.loader import expand_paths, load_program

    files, missing = expand_paths(paths or default_paths())
    if missing:
        raise PathsError("no such file or folder: " + ", ".join(missing))
    if not files:
        raise PathsError("no .mlab files under " + ", ".join(paths or default_paths()))
    return check_program(load_program(files), data)


def compile_paths(paths: list[str] | None, out: Path) -> tuple[Compiled, dict | None]:
    """Check, and write the build when there are no errors: (the `Compiled`, the manifest or None)."""
    from .program.emit import write_build

    compiled = check_paths(paths)
    if not compiled.ok:
        return compiled, None
    return compiled, write_build(compiled, out)
