"""The small pieces both halves of mlab share, in one module the runtime may import.

`mlab` (the runtime) imports only this module and `mlabc.api` (compiling and checking). What is
here is cheap to import (no parser, no checker) and holds one rule each, so that the compiler and
the runtime cannot drift apart:

- `lazy_exports`: lazy re-exports for a package's `__init__` (every subpackage of both halves);
- `SIZE_UNITS`, `DURATION_UNITS`: bytes and seconds per unit of a size (8GiB) or duration (30m);
- `cache_root`: $MLAB_CACHE, else $XDG_CACHE_HOME/mlab, else ~/.cache/mlab;
- `data_dir`, `std_dir`, `tasks_dir`: the data that ships with mlab;
- `parse_command`: the start both command lines share (parse, --version, no verb);
- `quote`: a `.mlab` single-line string literal;
- `snake_case`: the default tool name of an action.
"""
from __future__ import annotations

import re

from .cli_start import parse_command
from .lazy import lazy_exports
from .resources import cache_root, data_dir, std_dir, tasks_dir
from .units import DURATION_UNITS, SIZE_UNITS

__all__ = ["DURATION_UNITS", "SIZE_UNITS", "cache_root", "data_dir", "lazy_exports", "parse_command", "quote",
           "snake_case", "std_dir", "tasks_dir"]


def quote(value: str) -> str:
    """A single-line string literal whose decoding is `value`."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def snake_case(name: str) -> str:
    """The default tool name of an action: `List Files` -> list_files, `Edit Script (AI)` -> edit_script_ai."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
