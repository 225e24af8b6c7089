"""Locate the data that ships with mlab: grammars/, spec/ and tasks/.

In a source checkout they sit beside the package folders; in an installed wheel
they are packaged inside `mlabc` (see pyproject.toml). Nothing else in mlabc
knows where they live.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent


@functools.cache
def data_dir(name: str) -> Path:
    """The folder `name` (grammars, spec or tasks), installed or in a checkout."""
    for candidate in (_HERE / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"mlab's {name}/ folder is missing from this installation")


def grammar_path() -> Path:
    return data_dir("grammars") / "mlab.lark"


def std_dir() -> Path:
    return data_dir("tasks") / "std"


def tasks_dir() -> Path:
    return data_dir("tasks")


@functools.cache
def spec_json(name: str) -> dict:
    """A JSON document of spec/ (e.g. 'primitives.json'), parsed once."""
    return json.loads((data_dir("spec") / name).read_text(encoding="utf-8"))
