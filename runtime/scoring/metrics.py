"""The metric catalogue: each name of spec/metrics.json mapped to its implementation.

Tabular metrics take the answers and a submission already aligned row by row on the
id (see `mlab.scoring.submission.load_and_validate`) plus the scored columns, and return a
float. Evaluator metrics (perplexity, custom) are computed by the task's declared
evaluator; here they only say so. The timed metric (runtime) is measured in the
sandbox by others; this module gives its two pure parts: `compare_outputs` (does the
candidate's output match the reference?) and `timed_score` (medians and speed-up).

`improvement` and `is_success` turn a score and a baseline into the result's verdict.
Nothing here draws random numbers: the same inputs always give the same score.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any, Callable, Sequence

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

def _numeric_pairs(answers: pd.DataFrame, submission: pd.DataFrame,
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


def accuracy(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Share of rows whose predicted label equals the answer."""
    column = columns[0]
    truth = [label_key(v) for v in answers[column]]
    predicted = [label_key(v) for v in submission[column]]
    return float(np.mean([t == p for t, p in zip(truth, predicted)]))


def mae(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Mean absolute error."""
    truth, predicted = _numeric_pairs(answers, submission, columns[0])
    return float(np.mean(np.abs(truth - predicted)))


def _rmse(truth: np.ndarray, predicted: np.ndarray) -> float:
    return float(np.sqrt(np.mean((truth - predicted) ** 2)))


def rmse(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Root mean squared error."""
    return _rmse(*_numeric_pairs(answers, submission, columns[0]))


def smape1(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """SMAPE in percent of (prediction + 1) against (answer + 1); a row where both are 0 counts 0."""
    truth, predicted = _numeric_pairs(answers, submission, columns[0])
    actual, forecast = truth + 1.0, predicted + 1.0
    half_sum = (np.abs(actual) + np.abs(forecast)) / 2.0
    safe = np.where(half_sum == 0, 1.0, half_sum)
    terms = np.where(half_sum == 0, 0.0, np.abs(forecast - actual) / safe)
    return float(100.0 * np.mean(terms))


def mcrmse(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Mean over the scored columns of each column's RMSE."""
    return float(np.mean([_rmse(*_numeric_pairs(answers, submission, c)) for c in columns]))


def _merged_intervals(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs as sorted, disjoint half-open intervals, so overlapping runs count each pixel once."""
    merged: list[list[int]] = []
    for start, length in sorted(runs):
        end = start + length
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def _intersection_size(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> int:
    i = j = total = 0
    while i < len(first) and j < len(second):
        low = max(first[i][0], second[j][0])
        high = min(first[i][1], second[j][1])
        total += max(0, high - low)
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return total


def mask_dice(truth_rle: Any, predicted_rle: Any) -> float:
    """Dice coefficient of two run-length encoded masks; two empty masks score 1."""
    truth = _merged_intervals(parse_rle(truth_rle))
    predicted = _merged_intervals(parse_rle(predicted_rle))
    size = sum(b - a for a, b in truth) + sum(b - a for a, b in predicted)
    if size == 0:
        return 1.0
    return 2.0 * _intersection_size(truth, predicted) / size


def dice(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Mean over rows (images) of the Dice coefficient of the run-length encoded masks."""
    column = columns[0]
    try:
        scores = [mask_dice(t, p) for t, p in zip(answers[column], submission[column])]
    except ValueError as error:
        raise MetricError(f"column `{column}` holds a malformed run-length encoding: {error}") from None
    return float(np.mean(scores))


def average_precision_at_k(truth: set[str], predicted: Sequence[str], k: int = MAP_K) -> float:
    """Kaggle's AP@K: precision at each first hit within the top k, over min(k, |truth|).

    A repeated item counts once. With no true item the ranking scores 1 when it is
    empty too, else 0 (the Kaggle formula divides by zero there).
    """
    if not truth:
        return 1.0 if not predicted else 0.0
    hits, total, seen = 0, 0.0, set()
    for rank, item in enumerate(predicted[:k], start=1):
        if item in truth and item not in seen:
            hits += 1
            total += hits / rank
        seen.add(item)
    return total / min(k, len(truth))


def fathomnet_roles(columns: Sequence[str]) -> tuple[str, str]:
    """(ranking column, out-of-sample probability column): `osd` by name, else the second."""
    if len(columns) != 2:
        raise MetricError(f"metric `fathomnet` scores two columns (categories, osd), got {list(columns)}")
    ranking, probability = columns
    return (probability, ranking) if ranking == "osd" else (ranking, probability)


def _roc_auc(flags: np.ndarray, probabilities: np.ndarray) -> float:
    """ROC AUC; with a single class in the answers no ranking exists, so it is 0.5 (chance)."""
    if len(np.unique(flags)) < 2:
        return 0.5
    from sklearn.metrics import roc_auc_score  # imported here: only fathomnet needs it
    return float(roc_auc_score(flags, probabilities))


def fathomnet(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """0.5 * ((2 * AUC - 1) of the out-of-sample probability + MAP@20 of the category ranking)."""
    ranking, probability = fathomnet_roles(columns)
    flags = pd.to_numeric(answers[probability], errors="coerce").to_numpy(dtype=float)
    if not np.isin(flags, (0.0, 1.0)).all():
        raise MetricError(f"the answers' `{probability}` column must hold 0 or 1 (out-of-sample flag)")
    predicted = pd.to_numeric(submission[probability], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(predicted)):
        raise MetricError(f"column `{probability}` of the submission holds values that are not finite numbers")
    precisions = [average_precision_at_k(set(parse_ranking(t)), parse_ranking(p))
                  for t, p in zip(answers[ranking], submission[ranking])]
    return 0.5 * ((2.0 * _roc_auc(flags, predicted) - 1.0) + float(np.mean(precisions)))


# --- the registry -------------------------------------------------------------------

ValueKinds = Callable[[Sequence[str]], dict[str, str]]


def _all_columns(kind: str) -> ValueKinds:
    return lambda columns: {c: kind for c in columns}


def _fathomnet_kinds(columns: Sequence[str]) -> dict[str, str]:
    ranking, probability = fathomnet_roles(columns)
    return {ranking: "ranking", probability: "number"}


@dataclass(frozen=True)
class Metric:
    """One entry of the catalogue.

    kind: tabular (scored here), evaluator (scored by the task's evaluator) or timed.
    columns: how many columns `metric NAME on ...` names: one, many, none or any.
    value_kinds: for tabular metrics, what each scored column holds: number, label,
    rle (run-length mask, may be empty) or ranking (space-separated items, may be empty).
    """
    name: str
    kind: str
    direction: str | None
    columns: str
    value_kinds: ValueKinds | None = None
    compute: Callable[[pd.DataFrame, pd.DataFrame, Sequence[str]], float] | None = None

    @property
    def needs_evaluator(self) -> bool:
        return self.kind == "evaluator"

    def __call__(self, answers: pd.DataFrame, submission: pd.DataFrame,
                 columns: Sequence[str]) -> float:
        """The score of an aligned submission; MetricError when it cannot be computed here."""
        if self.kind == "evaluator":
            raise MetricError(f"metric `{self.name}` is computed by the task's evaluator, and none was "
                              f"given: declare `evaluator \"<task>/evaluate.py:score\" because \"...\"`")
        if self.kind == "timed":
            raise MetricError(f"metric `{self.name}` is timed in the sandbox; use compare_outputs "
                              f"and timed_score, not a table of answers")
        columns = list(columns)
        self._check_columns(columns)
        for frame, what in ((answers, "answers"), (submission, "submission")):
            absent = [c for c in columns if c not in frame.columns]
            if absent:
                raise MetricError(f"the {what} lack the scored column(s) {absent}")
        if len(answers) != len(submission):
            raise MetricError(f"the submission has {len(submission)} rows but the answers have "
                              f"{len(answers)}: align them on the id first")
        if len(answers) == 0:
            raise MetricError("there are no rows to score")
        return float(self.compute(answers.reset_index(drop=True), submission.reset_index(drop=True),
                                  columns))

    def kinds_of(self, columns: Sequence[str]) -> dict[str, str]:
        """What each scored column holds (see the class docstring); {} for non-tabular metrics."""
        if self.value_kinds is None:
            return {}
        self._check_columns(list(columns))
        return self.value_kinds(columns)

    def _check_columns(self, columns: list[str]) -> None:
        if self.columns == "one" and len(columns) != 1:
            raise MetricError(f"metric `{self.name}` scores exactly one column, got {columns}")
        if self.columns == "many" and not columns:
            raise MetricError(f"metric `{self.name}` needs the columns it scores")


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("accuracy", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), accuracy),
    Metric("mae", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), mae),
    Metric("rmse", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), rmse),
    Metric("smape1", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), smape1),
    Metric("mcrmse", "tabular", LOWER_IS_BETTER, "many", _all_columns("number"), mcrmse),
    Metric("dice", "tabular", HIGHER_IS_BETTER, "one", _all_columns("rle"), dice),
    Metric("fathomnet", "tabular", HIGHER_IS_BETTER, "many", _fathomnet_kinds, fathomnet),
    Metric("perplexity", "evaluator", LOWER_IS_BETTER, "none"),
    Metric("runtime", "timed", LOWER_IS_BETTER, "one"),
    Metric("custom", "evaluator", None, "any"),
)}


def get_metric(name: str) -> Metric:
    """The catalogue entry called `name`; MetricError naming the known ones otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise MetricError(f"unknown metric `{name}`; known metrics: {', '.join(METRICS)}") from None


def score(name: str, answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """The score of an aligned submission under the metric `name`."""
    return get_metric(name)(answers, submission, columns)


def check_evaluator_score(value: Any, evaluator: str = "the evaluator") -> float:
    """An evaluator's return value as a float; MetricError unless it is a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise MetricError(f"{evaluator} returned {value!r} ({type(value).__name__}), not a number")
    if not math.isfinite(float(value)):
        raise MetricError(f"{evaluator} returned {value!r}, not a finite number")
    return float(value)


# --- verdict ------------------------------------------------------------------------

def improvement(score: float, baseline: float, direction: str) -> float:
    """Relative improvement of `score` over `baseline`, positive when better (0.1 = 10%).

    Lower is better: (baseline - score) / |baseline|; higher is better:
    (score - baseline) / |baseline|. A baseline of exactly 0 has no relative scale, so
    the difference itself is returned (as if |baseline| were 1): finite, signed the same
    way, and 0 when the score equals the baseline.
    """
    if direction not in DIRECTIONS:
        raise MetricError(f"direction must be {' or '.join(DIRECTIONS)}, got {direction!r}")
    for value, what in ((score, "score"), (baseline, "baseline")):
        if value is None or not math.isfinite(float(value)):
            raise MetricError(f"the {what} is {value!r}, not a finite number")
    gain = (baseline - score) if direction == LOWER_IS_BETTER else (score - baseline)
    scale = abs(baseline) if baseline != 0 else 1.0
    return float(gain / scale)


def is_success(improvement_value: float, threshold: float) -> bool:
    """True when the improvement reaches the task's threshold (both fractions: 0.1 = 10%).

    A hair of tolerance keeps an exact 10% from failing on float rounding.
    """
    return improvement_value >= threshold - 1e-12


# --- timed metric: output comparison and speed-up -----------------------------------

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


def timed_score(baseline_times: Sequence[float], candidate_times: Sequence[float]) -> dict:
    """Medians of the two programs' wall times (seconds), the speed-up, and each round's own.

    The score of the timed metric is the candidate's median (lower is better), the baseline
    is the starter's median, so `improvement` gives 1 - 1/speedup. When the two were timed
    in rounds (one run of each per round, equally many), `paired_speedups` holds each round's
    baseline/candidate and `speedup_floor` the smallest of them; `timed_rounds_succeed` judges
    whether those rounds show the speed-up beyond timing noise.
    """
    medians = {}
    for times, what in ((baseline_times, "baseline"), (candidate_times, "candidate")):
        values = list(times)
        if not values:
            raise MetricError(f"no {what} timings were recorded")
        if not all(isinstance(t, (int, float)) and math.isfinite(t) and t > 0 for t in values):
            raise MetricError(f"the {what} timings must be positive numbers of seconds, got {values}")
        medians[what] = float(median(values))
    baseline, candidate = medians["baseline"], medians["candidate"]
    result = {"baseline_median": baseline, "candidate_median": candidate, "speedup": baseline / candidate,
              "baseline_runs": len(baseline_times), "candidate_runs": len(candidate_times),
              "score": candidate, "baseline": baseline}
    if len(baseline_times) == len(candidate_times):
        paired = [float(b) / float(c) for b, c in zip(baseline_times, candidate_times)]
        result.update(paired_speedups=paired, speedup_floor=min(paired))
    return result


# A sign test on the rounds: with the true speed-up below the threshold, a round clears it with
# probability at most 1/2, so needing k of n rounds bounds a false success by P(Binom(n, 1/2) >= k).
SIGN_TEST_LEVEL = 0.035


def rounds_required(rounds: int) -> int:
    """How many of `rounds` paired rounds must clear the threshold: the sign test's critical count
    at SIGN_TEST_LEVEL (5 of 5, 12 of 15), or every round when so few cannot reach that level."""
    for needed in range(rounds + 1):
        tail = sum(math.comb(rounds, k) for k in range(needed, rounds + 1)) / 2 ** rounds
        if tail <= SIGN_TEST_LEVEL:
            return needed
    return rounds


def rounds_clearing(paired_speedups: Sequence[float], threshold: float) -> int:
    """How many rounds' own speed-up reaches the improvement threshold (0.1: 1/0.9 times faster)."""
    return sum(is_success(1.0 - 1.0 / float(r), threshold) for r in paired_speedups)


def timed_rounds_succeed(paired_speedups: Sequence[float] | None, threshold: float) -> bool:
    """Whether enough rounds clear the threshold for the speed-up to be more than timing noise.

    The medians alone let noise pass for a speed-up: on a busy machine an unchanged starter
    once timed 10% faster than itself. None (a score not timed in rounds: untimed metrics)
    passes unchanged.
    """
    if paired_speedups is None:
        return True
    return rounds_clearing(paired_speedups, threshold) >= rounds_required(len(paired_speedups))


def needs_more_rounds(baseline_times: Sequence[float], candidate_times: Sequence[float], threshold: float) -> bool:
    """The medians reach the threshold but too few rounds do: time more rounds before deciding.

    With five rounds, every round must clear the threshold; on a busy machine one slow round
    can hide a real speed-up, so such a split verdict earns more rounds (mlab.scoring.timed: ten) and
    the sign test over all of them decides. Both stages together keep a false success below
    1/32 + P(Binom(15, 1/2) >= 12), under 5%.
    """
    timing = timed_score(baseline_times, candidate_times)
    by_medians = is_success(improvement(timing["score"], timing["baseline"], LOWER_IS_BETTER), threshold)
    return by_medians and not timed_rounds_succeed(timing.get("paired_speedups"), threshold)
