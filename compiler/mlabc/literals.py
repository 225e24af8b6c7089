"""How a value is written as `.mlab` source: `quote`, the inverse of mlabc.transform.decode_string,
for the printer and for the declarations the runtime prints (a variant's checksums)."""
from __future__ import annotations


def quote(value: str) -> str:
    """A single-line string literal whose decoding is `value`."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'
