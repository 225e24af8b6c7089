"""Metric directions and the value parsing metrics share: missing values, label keys, run-length masks, rankings."""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from mlab.errors import MlabError


LOWER_IS_BETTER = "lower_is_better"
HIGHER_IS_BETTER = "higher_is_better"
DIRECTIONS = (LOWER_IS_BETTER, HIGHER_IS_BETTER)

MAP_K = 20
# Tolerances for timed outputs: a faster program may sum in another order, so float32
# results can drift in the last digits; anything beyond this is a different answer.
ARRAY_RTOL = 1e-4
ARRAY_ATOL = 1e-6

_NUMBER_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_INTEGER_TEXT = re.compile(r"[+-]?\d+")


class MetricError(MlabError, ValueError):
    """A score cannot be computed; the message says why, in words a user can act on."""


# --- values -------------------------------------------------------------------------

def is_missing(value: Any) -> bool:
    """True for None, NaN and pandas' missing markers."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def label_key(value: Any) -> str:
    """The canonical text of a label or id, so that 1, 1.0, "1" and " 1 " compare equal.

    Booleans compare case-insensitively ("true" == True); other text is compared as
    written, after trimming spaces. Missing values become "". Whole numbers written as
    digits are compared as exact integers, never through a float, so two 19-digit ids
    that differ in their last digit stay apart.
    """
    if is_missing(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _number_key(float(value))
    text = str(value).strip()
    if text.lower() in ("true", "false"):
        return text.capitalize()
    if _INTEGER_TEXT.fullmatch(text):
        return str(int(text))
    if _NUMBER_TEXT.fullmatch(text):
        number = float(text)
        if math.isfinite(number):
            return _number_key(number)
    return text


def _number_key(number: float) -> str:
    if math.isfinite(number) and number == int(number):
        return str(int(number))
    return repr(number)


def parse_rle(text: Any) -> list[tuple[int, int]]:
    """The runs (start, length) of a run-length encoded mask; "" or NaN is the empty mask.

    Starts are 1-based positions in the row-major flattened mask. Raises ValueError
    with a short reason when the text is not "start length start length ...".
    """
    if is_missing(text):
        return []
    tokens = str(text).split()
    if len(tokens) % 2:
        raise ValueError(f"{len(tokens)} numbers, but runs come in pairs `start length`")
    bad = [t for t in tokens if not (t.isascii() and t.isdigit())]
    if bad:
        raise ValueError(f"`{bad[0]}` is not a pixel position or length (a whole number from 1)")
    numbers = [int(t) for t in tokens]
    runs = list(zip(numbers[0::2], numbers[1::2]))
    for start, length in runs:
        if start < 1:
            raise ValueError(f"start {start}: starts are 1-based pixel positions")
        if length < 1:
            raise ValueError(f"length {length} after start {start}: lengths are at least 1")
    return runs


def parse_ranking(text: Any) -> list[str]:
    """The space-separated items of a ranking, best first; "" or NaN is an empty ranking."""
    return [] if is_missing(text) else str(text).split()


# --- tabular metrics ------------------------------------------------------------------


def numeric_pairs(answers: pd.DataFrame, submission: pd.DataFrame,
                  column: str) -> tuple[np.ndarray, np.ndarray]:
    """Answers and predictions of one column as floats, without rows lacking an answer.

    Rows whose answer is missing are not scored (as in the AMP Parkinson's competition,
    where some visits have no value for a target); predictions must all be numbers.
    """
    truth = pd.to_numeric(answers[column], errors="coerce").to_numpy(dtype=float)
    predicted = pd.to_numeric(submission[column], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(predicted)):
        raise MetricError(f"column `{column}` of the submission holds values that are not finite numbers")
    keep = np.isfinite(truth)
    if not keep.any():
        raise MetricError(f"no row of the answers has a numeric value in `{column}`")
    return truth[keep], predicted[keep]
