"""Writing an export: a new file or folder, never over one that exists, never half written."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from mlab.errors import StorageError, UsageError

# A lone surrogate (a model's "\udcff", a file name that is not UTF-8) cannot be written as UTF-8;
# as a JSON escape it reads back as the same code point.
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(document) -> str:
    """The document as indented JSON that is valid UTF-8 whatever strings it holds."""
    text = json.dumps(document, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"


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
