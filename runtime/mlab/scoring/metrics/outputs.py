"""The timed metric's output check: does a candidate's output file match the reference (tables, arrays, JSON, text)?"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from mlab.scoring.metrics.values import ARRAY_ATOL, ARRAY_RTOL


def compare_outputs(reference: Path, candidate: Path, rtol: float = ARRAY_RTOL,
                    atol: float = ARRAY_ATOL) -> tuple[bool, str]:
    """Whether the candidate program's output matches the reference output, and why not.

    By the reference's suffix: .npy/.npz arrays must have the same shapes (and keys) and
    be close (np.allclose with rtol/atol, NaN equal to NaN); .json must be equal with
    numbers close; anything else is text, equal after trailing whitespace is stripped
    from each line and trailing blank lines are dropped.
    """
    reference, candidate = Path(reference), Path(candidate)
    if not reference.is_file():
        return False, f"the reference output {reference.name} is missing"
    if not candidate.is_file():
        return False, f"the script did not write {candidate.name}"
    readers = {".npy": _read_npy, ".npz": _read_npz,
               ".json": lambda p: json.loads(p.read_text(encoding="utf-8"))}
    read = readers.get(reference.suffix.lower(),
                       lambda p: p.read_text(encoding="utf-8", errors="replace"))
    outputs = []
    for path, what in ((reference, "the reference output"), (candidate, "the script's output")):
        try:
            outputs.append(read(path))
        except Exception as error:  # an unreadable file is a mismatch with a reason, never a crash
            return False, f"{what} {path.name} could not be read: {type(error).__name__}: {error}"
    expected, got = outputs
    if reference.suffix.lower() in (".npy", ".npz"):
        return _compare_array_sets(expected, got, rtol, atol, candidate.name)
    if reference.suffix.lower() == ".json":
        difference = _json_difference(expected, got, rtol, atol, "$")
        return difference is None, difference or "outputs match"
    return _compare_text(expected, got, candidate.name)


def _read_npy(path: Path) -> dict[str, np.ndarray]:
    array = np.load(path, allow_pickle=False)
    if not isinstance(array, np.ndarray):
        raise ValueError("not a single .npy array")
    return {"": array}


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    archive = np.load(path, allow_pickle=False)
    if not hasattr(archive, "files"):
        raise ValueError("not an .npz archive")
    with archive:
        return {k: archive[k] for k in archive.files}


def _compare_array_sets(expected: dict[str, np.ndarray], got: dict[str, np.ndarray], rtol: float,
                        atol: float, name: str) -> tuple[bool, str]:
    """Arrays by key ("" for a lone .npy array): same keys, shapes, and close values."""
    if set(expected) != set(got):
        return False, f"{name} holds arrays {sorted(got)}, expected {sorted(expected)}"
    for key in sorted(expected):
        want, have = expected[key], got[key]
        label = f"{name}[{key}]" if key else name
        if want.shape != have.shape:
            return False, f"{label} has shape {have.shape}, expected {want.shape}"
        if not all(np.issubdtype(a.dtype, np.number) or a.dtype == bool for a in (want, have)):
            if not np.array_equal(want, have):
                return False, f"{label} differs from the reference"
            continue
        close = np.isclose(have.astype(float), want.astype(float), rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            wrong = int(close.size - np.count_nonzero(close))
            return False, (f"{label} differs from the reference at {wrong} of {close.size} values "
                           f"(rtol={rtol}, atol={atol})")
    return True, "outputs match"


def _json_difference(expected: Any, got: Any, rtol: float, atol: float, where: str) -> str | None:
    """Where the two JSON values first differ (a JSONPath-like location), None when equal."""
    def is_number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if is_number(expected) and is_number(got):
        both_nan = math.isnan(expected) and math.isnan(got)
        if both_nan or math.isclose(expected, got, rel_tol=rtol, abs_tol=atol):
            return None
    elif isinstance(expected, dict) and isinstance(got, dict):
        if set(expected) != set(got):
            return f"at {where}: keys {sorted(got)}, expected {sorted(expected)}"
        return next((d for k in expected
                     if (d := _json_difference(expected[k], got[k], rtol, atol, f"{where}.{k}"))), None)
    elif isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return f"at {where}: {len(got)} items, expected {len(expected)}"
        return next((d for i, (e, g) in enumerate(zip(expected, got))
                     if (d := _json_difference(e, g, rtol, atol, f"{where}[{i}]"))), None)
    elif expected == got and type(expected) is type(got):
        return None
    return f"at {where}: {got!r}, expected {expected!r}"


def _compare_text(expected: str, got: str, name: str) -> tuple[bool, str]:
    def lines(text: str) -> list[str]:
        stripped = [line.rstrip() for line in text.splitlines()]
        while stripped and not stripped[-1]:
            stripped.pop()
        return stripped

    want, have = lines(expected), lines(got)
    for number, (w, h) in enumerate(zip(want, have), start=1):
        if w != h:
            return False, f"{name} differs from the reference at line {number}"
    if len(want) != len(have):
        return False, f"{name} has {len(have)} lines, expected {len(want)}"
    return True, "outputs match"
