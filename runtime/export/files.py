"""Writing an export: a new file or folder, never over one that exists, never half written, and
standard JSON whatever a model or a script put in the run (see `standard`)."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

from mlab.errors import StorageError, UsageError
from mlab.models.decode import MAX_JSON_DEPTH
from mlab.observation import utf8_safe

# An export's own levels plus a value's: a list or object nested deeper is TOO_DEEP in an export.
MAX_EXPORT_DEPTH = 2 * MAX_JSON_DEPTH
TOO_DEEP = f"[mlab: nested deeper than {MAX_EXPORT_DEPTH} levels, left out]"
NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def standard(value, depth: int = 0):
    """`value` as standard JSON can hold it, in the documented forms of docs/interop.md: a NaN or an
    infinity as the string "NaN", "Infinity" or "-Infinity"; a lone surrogate (a model's "\\udcff",
    a file name that is not UTF-8), which no UTF-8 text holds, as its escape written out (the six
    characters \\udcff); a list or object nested deeper than MAX_EXPORT_DEPTH as TOO_DEEP. Anything
    else JSON has no value for is its text."""
    if isinstance(value, str):
        return utf8_safe(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE.get(value, "NaN")
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_EXPORT_DEPTH:
            return TOO_DEEP
        if isinstance(value, dict):
            return {utf8_safe(str(k)): standard(v, depth + 1) for k, v in value.items()}
        return [standard(v, depth + 1) for v in value]
    return utf8_safe(str(value))


def json_text(document) -> str:
    """The document as indented standard JSON (valid UTF-8, no NaN or Infinity), whatever it holds."""
    return json.dumps(standard(document), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def refuse_existing(path: Path) -> None:
    if os.path.lexists(path):
        raise UsageError(f"{path} already exists; give a new path (an export never overwrites)")
    if not Path(path).parent.is_dir():
        raise UsageError(f"the folder of {path} does not exist")


def write_new(path: Path, data: bytes) -> None:
    """data into the new file `path`, whole or not at all (a file of that name is never replaced)."""
    path = Path(path)
    refuse_existing(path)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_bytes(data)
        os.link(partial, path)  # fails if the name appeared meanwhile, where a rename would replace it
    except FileExistsError:
        raise UsageError(f"{path} already exists; give a new path (an export never overwrites)") from None
    except OSError as problem:
        raise StorageError(f"cannot write {path}: {problem.strerror or problem}") from None
    finally:
        partial.unlink(missing_ok=True)
