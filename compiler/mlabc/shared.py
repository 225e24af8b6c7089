"""The small pieces both halves of mlab share, in one module the runtime may import.

`mlab` (the runtime) imports only this module and `mlabc.api` (compiling and checking). What is
here is cheap to import (no parser, no checker) and holds one rule each, so that the compiler and
the runtime cannot drift apart:

- `lazy_exports`: lazy re-exports for a package's `__init__` (every subpackage of both halves);
- `SIZE_UNITS`, `DURATION_UNITS`: bytes and seconds per unit of a size (8GiB) or duration (30m);
- `cache_root`: $MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab;
- `data_dir`, `std_dir`, `tasks_dir`: the data that ships with mlab; `checkout_root`: the source checkout, if any;
- `parse_command`: the start both command lines share (parse, --version, no verb);
- `quote`: a `.mlab` single-line string literal;
- `snake_case`: the default tool name of an action;
- `closest`: the known name closest to a mistyped one (the compiler's hints and the runtime's).
"""
from __future__ import annotations

import re

from .lazy import lazy_exports

__all__ = ["DURATION_UNITS", "SIZE_UNITS", "cache_root", "checkout_root", "closest", "data_dir", "lazy_exports", "parse_command", "quote",
           "snake_case", "std_dir", "store_in_cache", "tasks_dir"]

# name → the kernel module that defines it, imported when the name is first read (so that
# `import mlabc.shared`, which every subpackage of the runtime does, costs next to nothing)
_EXPORTS = {"parse_command": "cli_start", "cache_root": "resources", "checkout_root": "resources", "data_dir": "resources", "std_dir": "resources",
            "tasks_dir": "resources", "store_in_cache": "resources", "DURATION_UNITS": "units", "SIZE_UNITS": "units",
            "closest": "values"}

__getattr__, _ = lazy_exports(__package__, _EXPORTS)  # modules beside this one, in mlabc


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def quote(value: str) -> str:
    """A single-line string literal whose decoding is `value`."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def snake_case(name: str) -> str:
    """The default tool name of an action: `List Files` -> list_files, `Edit Script (AI)` -> edit_script_ai."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
