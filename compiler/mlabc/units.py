"""The units of durations and sizes, in seconds and bytes: the one table mlab reads them by.

The grammar's DURATION and SIZE terminals (grammars/mlab.lark) spell the same units.
"""
from __future__ import annotations

DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
SIZE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
              "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

# A number followed by a unit, e.g. 30m or 8GiB (the whole text, unanchored).
DURATION_PATTERN = r"\d+(\.\d+)?(" + "|".join(DURATION_UNITS) + ")"
SIZE_PATTERN = r"\d+(\.\d+)?(" + "|".join(SIZE_UNITS) + ")"
