"""The metric catalogue (each name of spec/metrics.json → its implementation), tabular metrics, and the verdict
(`improvement`, `is_success`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from mlab.scoring.metrics import field, learned
from mlab.scoring.metrics.learned import answer_columns, average_precision_at_k
from mlab.scoring.metrics.values import (DIRECTIONS, HIGHER_IS_BETTER, LOWER_IS_BETTER, MAP_K, MetricError, label_key,
                                         numeric_pairs, parse_ranking, parse_rle)


def accuracy(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Share of rows whose predicted label equals the answer."""
    column = columns[0]
    truth = [label_key(v) for v in answers[column]]
    predicted = [label_key(v) for v in submission[column]]
    return float(np.mean([t == p for t, p in zip(truth, predicted)]))


def mae(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Mean absolute error."""
    truth, predicted = numeric_pairs(answers, submission, columns[0])
    return float(np.mean(np.abs(truth - predicted)))


def _rmse(truth: np.ndarray, predicted: np.ndarray) -> float:
    return float(np.sqrt(np.mean((truth - predicted) ** 2)))


def rmse(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Root mean squared error."""
    return _rmse(*numeric_pairs(answers, submission, columns[0]))


def smape1(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """SMAPE in percent of (prediction + 1) against (answer + 1); a row where both are 0 counts 0."""
    truth, predicted = numeric_pairs(answers, submission, columns[0])
    actual, forecast = truth + 1.0, predicted + 1.0
    half_sum = (np.abs(actual) + np.abs(forecast)) / 2.0
    safe = np.where(half_sum == 0, 1.0, half_sum)
    terms = np.where(half_sum == 0, 0.0, np.abs(forecast - actual) / safe)
    return float(100.0 * np.mean(terms))


def mcrmse(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str]) -> float:
    """Mean over the scored columns of each column's RMSE."""
    return float(np.mean([_rmse(*numeric_pairs(answers, submission, c)) for c in columns]))


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


DICE_OVER = ("rows", "pixels")


def dice(answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str], over: str = "rows") -> float:
    """Dice of the run-length encoded masks: the mean over rows (images) of each row's, or with
    `over = "pixels"` the global one, 2 * sum |X n Y| / sum (|X| + |Y|) over every row's pixels."""
    column = columns[0]
    if over not in DICE_OVER:
        raise MetricError(f"dice takes `over` among {', '.join(DICE_OVER)}, got {over!r}")
    try:
        masks = [(_merged_intervals(parse_rle(t)), _merged_intervals(parse_rle(p)))
                 for t, p in zip(answers[column], submission[column])]
    except ValueError as error:
        raise MetricError(f"column `{column}` holds a malformed run-length encoding: {error}") from None
    if over == "rows":
        return float(np.mean([_dice_of(truth, predicted) for truth, predicted in masks]))
    overlap = sum(_intersection_size(truth, predicted) for truth, predicted in masks)
    size = sum(b - a for truth, predicted in masks for a, b in truth + predicted)
    return 1.0 if size == 0 else 2.0 * overlap / size


def _dice_of(truth: list[tuple[int, int]], predicted: list[tuple[int, int]]) -> float:
    size = sum(b - a for a, b in truth) + sum(b - a for a, b in predicted)
    return 1.0 if size == 0 else 2.0 * _intersection_size(truth, predicted) / size


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


ROWS = "rows"  # every tabular metric's parameter: the answers' 0/1 column flagging the rows scored


def scored_rows(answers: pd.DataFrame, submission: pd.DataFrame, flag: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows whose answers' `flag` is 1 (or true), of both aligned tables: `metric NAME(rows = "flag")`."""
    keys = [label_key(v) for v in answers[flag]]
    odd = sorted({k for k in keys if k not in ("1", "0", "True", "False")})
    if odd:
        raise MetricError(f"the answers' row flag `{flag}` must hold 1 (scored) or 0, found {odd[:5]}")
    keep = np.array([k in ("1", "True") for k in keys])
    if not keep.any():
        raise MetricError(f"no row of the answers is flagged 1 in `{flag}`: there are no rows to score")
    return answers[keep].reset_index(drop=True), submission[keep].reset_index(drop=True)


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
    compute: Callable[..., float] | None = None
    parameters: tuple[tuple[str, Any], ...] = ()  # (name, default) of each `metric NAME(name = value)`

    def settings(self, params: dict | None = None) -> dict:
        """The declared parameters over their defaults (`rows`, every tabular metric's, only when declared);
        MetricError for one the metric does not take."""
        params = dict(params or {})
        rows = params.pop(ROWS, None)
        defaults = dict(self.parameters)
        unknown = sorted(set(params) - set(defaults))
        if unknown or (rows is not None and self.kind != "tabular"):
            raise MetricError(f"metric `{self.name}` takes no parameter {', '.join(unknown or [ROWS])}"
                              + (f" (it takes {', '.join(defaults)})" if defaults else ""))
        return {**defaults, **params, **({ROWS: rows} if rows is not None else {})}

    def answer_columns(self, columns: Sequence[str], params: dict | None = None) -> list[str]:
        """The answers' columns the metric reads (a probability table reads the `answer` column, mase its
        `scale`, a declared `rows` its flag column)."""
        settings = self.settings(params)
        read = answer_columns(self.name, columns, settings)
        if self.name == "mase":
            read.append(settings["scale"])
        if ROWS in settings:
            read.append(settings[ROWS])
        return list(dict.fromkeys(read))

    def __call__(self, answers: pd.DataFrame, submission: pd.DataFrame,
                 columns: Sequence[str], params: dict | None = None) -> float:
        """The score of an aligned submission; MetricError when it cannot be computed here."""
        if self.kind == "evaluator":
            raise MetricError(f"metric `{self.name}` is computed by the task's evaluator, and none was "
                              f"given: declare `evaluator \"<task>/evaluate.py:score\" because \"...\"`")
        if self.kind == "timed":
            raise MetricError(f"metric `{self.name}` is timed in the sandbox; use compare_outputs "
                              f"and timed_score, not a table of answers")
        columns = list(columns)
        self._check_columns(columns)
        settings = self.settings(params)
        for frame, what, wanted in ((answers, "answers", self.answer_columns(columns, settings)),
                                    (submission, "submission", columns)):
            absent = [c for c in wanted if c not in frame.columns]
            if absent:
                raise MetricError(f"the {what} lack the scored column(s) {absent}")
        if len(answers) != len(submission):
            raise MetricError(f"the submission has {len(submission)} rows but the answers have "
                              f"{len(answers)}: align them on the id first")
        if len(answers) == 0:
            raise MetricError("there are no rows to score")
        if ROWS in settings:
            answers, submission = scored_rows(answers, submission, settings.pop(ROWS))
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(self.compute(answers.reset_index(drop=True), submission.reset_index(drop=True),
                                       columns, **settings))
        if not math.isfinite(value):
            # A backstop: the submission check bounds predictions so that this does not happen.
            raise MetricError(f"the submission's {self.name} is {value!r}, not a finite number: "
                              f"its predictions are too large to score")
        return value

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


_AVERAGED = (("average", "binary"), ("pos_label", "1"))
_ANSWER = (("answer", "label"),)

METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("accuracy", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), accuracy),
    Metric("mae", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), mae),
    Metric("rmse", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), rmse),
    Metric("smape1", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), smape1),
    Metric("mcrmse", "tabular", LOWER_IS_BETTER, "many", _all_columns("number"), mcrmse),
    Metric("dice", "tabular", HIGHER_IS_BETTER, "one", _all_columns("rle"), dice, (("over", "rows"),)),
    Metric("fathomnet", "tabular", HIGHER_IS_BETTER, "many", _fathomnet_kinds, fathomnet),
    Metric("f1", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), learned.f1, _AVERAGED),
    Metric("precision", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), learned.precision, _AVERAGED),
    Metric("recall", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), learned.recall, _AVERAGED),
    Metric("qwk", "tabular", HIGHER_IS_BETTER, "one", _all_columns("number"), learned.qwk),
    Metric("r2", "tabular", HIGHER_IS_BETTER, "one", _all_columns("number"), learned.r2),
    Metric("rmsle", "tabular", LOWER_IS_BETTER, "one", _all_columns("nonnegative"), learned.rmsle),
    Metric("mape", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), learned.mape),
    Metric("roc_auc", "tabular", HIGHER_IS_BETTER, "many", _all_columns("probability"), learned.roc_auc, _ANSWER),
    Metric("log_loss", "tabular", LOWER_IS_BETTER, "many", _all_columns("probability"), learned.log_loss, _ANSWER),
    Metric("top_k_accuracy", "tabular", HIGHER_IS_BETTER, "many", _all_columns("probability"),
           learned.top_k_accuracy, _ANSWER + (("k", 5),)),
    Metric("proba_accuracy", "tabular", HIGHER_IS_BETTER, "many", _all_columns("probability"),
           learned.proba_accuracy, _ANSWER),
    Metric("map_at_k", "tabular", HIGHER_IS_BETTER, "one", _all_columns("ranking"), learned.map_at_k, (("k", 5),)),
    Metric("column_roc_auc", "tabular", HIGHER_IS_BETTER, "many", _all_columns("probability"), field.column_roc_auc),
    Metric("lwlrap", "tabular", HIGHER_IS_BETTER, "many", _all_columns("number"), field.lwlrap),
    Metric("kl_divergence", "tabular", LOWER_IS_BETTER, "many", _all_columns("probability"), field.kl_divergence),
    Metric("label_set_f1", "tabular", HIGHER_IS_BETTER, "one", _all_columns("ranking"), field.label_set_f1),
    Metric("jaccard", "tabular", HIGHER_IS_BETTER, "one", _all_columns("text"), field.jaccard),
    Metric("levenshtein", "tabular", LOWER_IS_BETTER, "one", _all_columns("text"), field.levenshtein),
    Metric("word_error_rate", "tabular", LOWER_IS_BETTER, "one", _all_columns("text"), field.word_error_rate),
    Metric("kendall_tau", "tabular", HIGHER_IS_BETTER, "one", _all_columns("ranking"), field.kendall_tau),
    Metric("pearson", "tabular", HIGHER_IS_BETTER, "many", _all_columns("number"), field.pearson),
    Metric("spearman", "tabular", HIGHER_IS_BETTER, "many", _all_columns("number"), field.spearman),
    Metric("mcc", "tabular", HIGHER_IS_BETTER, "one", _all_columns("label"), field.mcc),
    Metric("error_rate", "tabular", LOWER_IS_BETTER, "one", _all_columns("label"), field.error_rate),
    Metric("mcrmsle", "tabular", LOWER_IS_BETTER, "many", _all_columns("nonnegative"), field.mcrmsle),
    Metric("wape", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), field.wape),
    Metric("mase", "tabular", LOWER_IS_BETTER, "one", _all_columns("number"), field.mase, (("scale", "scale"),)),
    Metric("perplexity", "evaluator", LOWER_IS_BETTER, "none"),
    Metric("runtime", "timed", LOWER_IS_BETTER, "one"),
    Metric("custom", "evaluator", None, "any", parameters=(("name", "custom"),)),  # name: shown in results
)}


def get_metric(name: str) -> Metric:
    """The catalogue entry called `name`; MetricError naming the known ones otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise MetricError(f"unknown metric `{name}`; known metrics: {', '.join(METRICS)}") from None


def score(name: str, answers: pd.DataFrame, submission: pd.DataFrame, columns: Sequence[str],
          params: dict | None = None) -> float:
    """The score of an aligned submission under the metric `name` with its declared parameters."""
    return get_metric(name)(answers, submission, columns, params)


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
