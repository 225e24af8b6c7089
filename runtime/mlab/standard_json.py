"""The one writer of the JSON files and lines mlab writes for other programs.

result.json, run.json, models.json, scores.jsonl, a sweep's state, the exports, the Harbor
verifier's files, the trace and every `--json` document are standard JSON whatever a model, a
provider or a script put in the value. A document is first written as it is, strictly (no NaN or
Infinity, valid UTF-8); only one that cannot be is rewritten through `standard`, so the common
case costs one encode. Nothing is refused. Files are written whole through mlab.confined.write_into,
the one atomic writer.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from mlab.text import utf8_safe

# Nesting deeper than this is refused in what a model or a provider sends (mlab.models.decode).
MAX_JSON_DEPTH = 100
# A file's own levels plus a value's: a list or object nested deeper is TOO_DEEP in a written file.
MAX_EXPORT_DEPTH = 2 * MAX_JSON_DEPTH
TOO_DEEP = f"[mlab: nested deeper than {MAX_EXPORT_DEPTH} levels, left out]"
NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def _keep(text: str) -> str:
    return text


def standard(value, depth: int = 0, text=utf8_safe):
    """`value` as standard JSON can hold it, in the documented forms of docs/interop.md: a NaN or an
    infinity as the string "NaN", "Infinity" or "-Infinity"; a lone surrogate (a model's "\\udcff",
    a file name that is not UTF-8), which no UTF-8 text holds, as its escape written out (the six
    characters \\udcff); a list or object nested deeper than MAX_EXPORT_DEPTH as TOO_DEEP. Anything
    else JSON has no value for is its text. `text` is what becomes of each string (the trace keeps
    lone surrogates, which it writes as \\uXXXX escapes that read back as the same string)."""
    if isinstance(value, str):
        return text(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE.get(value, "NaN")
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_EXPORT_DEPTH:
            return TOO_DEEP
        if isinstance(value, dict):
            return {text(str(k)): standard(v, depth + 1, text) for k, v in value.items()}
        return [standard(v, depth + 1, text) for v in value]
    return text(str(value))


def dumps(document, *, indent: int | None = 2, sort_keys: bool = False, keep_surrogates: bool = False,
          compact: bool = False, ascii: bool = False) -> str:
    """The document as standard JSON text (no newline at the end). keep_surrogates: lone surrogates
    stay in the text returned (the caller escapes them, as the trace does); otherwise the text is
    valid UTF-8. compact: no spaces after separators (one line of a .jsonl file). ascii: every
    character past ASCII written as a \\u escape (for a terminal of any encoding)."""
    if ascii:
        return json.dumps(standard(document), indent=indent, sort_keys=sort_keys, allow_nan=False)
    options = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": False, "allow_nan": False}
    if compact:
        options["separators"] = (",", ":")
    try:
        text = json.dumps(document, **options)
        if not keep_surrogates:
            text.encode("utf-8")
        return text
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        return json.dumps(standard(document, text=_keep if keep_surrogates else utf8_safe), **options)


def json_text(document, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """The document as standard JSON, valid UTF-8, ending in a newline."""
    return dumps(document, indent=indent, sort_keys=sort_keys) + "\n"


def write_json(path, document, *, indent: int | None = 2, sort_keys: bool = False, sync: bool = False) -> None:
    """The document into `path` as standard JSON, replaced whole: a reader sees the old file or the
    new one (sync: flushed to disk before it replaces the old one). OSError is the caller's."""
    from mlab.confined import write_into

    path = Path(path)
    write_into(path.parent, path.name, json_text(document, indent=indent, sort_keys=sort_keys), sync=sync)


def write_lines(path, rows) -> None:
    """Each row as one line of standard JSON (a .jsonl file), the file replaced whole."""
    from mlab.confined import write_into

    path = Path(path)
    write_into(path.parent, path.name, "".join(dumps(row, indent=None) + "\n" for row in rows))
