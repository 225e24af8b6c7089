"""The library behind the CLI, and mlabc's public API: check and compile paths.

`mlabc.api` (with `mlabc.__version__`), `mlabc.data_model` and the kernel modules that hold a rule
both halves follow (`resources`: the cache root and the bundled folders; `units`; `names`:
tool names and "did you mean"; `literals`: quoting; `cli_start`) are the whole of mlabc that the
runtime (`mlab`) and other programs may use; every other module of mlabc may be renamed
or moved without notice. The names re-exported here are imported on first use, so
`import mlabc.api` stays cheap for the runtime's start-up:

- `check_paths`, `compile_paths`, `default_paths`, `PathsError`: check and build `.mlab` sources;
- `BuildWriteError`: the build folder cannot be written;
- `render_all`: diagnostics as the CLI prints them;
- `problems`: JSON Schema violations of an artifact of spec/;
- `__version__`: the compiler's version.
"""
from __future__ import annotations

from pathlib import Path
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a tenth of `mlab --help`)

from . import __version__
from .lazy import lazy_exports

if TYPE_CHECKING:
    from .program.check import Compiled

__all__ = ["BuildWriteError", "PathsError", "__version__", "check_paths", "compile_paths", "default_paths", "problems",
           "render_all"]

# name → the module (relative to mlabc) that defines it; imported when the name is first read.
_EXPORTS = {
    "BuildWriteError": ".resources",
    "render_all": ".diagnostics",
    "problems": ".schemas",
}


__getattr__, _ = lazy_exports(__package__, {name: module.lstrip(".") for name, module in _EXPORTS.items()})


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
