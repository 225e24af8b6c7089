"""The standard metrics that competition graders use beyond the first catalogue: label tables scored
column by column (column_roc_auc, lwlrap, kl_divergence), label sets and texts (label_set_f1, jaccard,
levenshtein, word_error_rate, kendall_tau), correlations (pearson, spearman, mcc), error rates and
forecast errors (error_rate, mcrmsle, mase, wape), and the global Dice of `dice(over = "pixels")`.

A label table is one submission column per label; unlike a probability table, its answers are a table
of the same columns (0/1 flags, or probabilities for kl_divergence), so a row may carry several labels.
Each formula is written out in docs/authoring.md#the-metric-formulas; docs/authoring.md#mle-bench-graders
maps the graders of MLE-bench's competitions onto these names.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from mlab.scoring.metrics.values import MetricError, label_key, numeric_pairs, parse_ranking

KL_EPSILON = 1e-15  # kl_divergence clips predictions into [eps, 1 - eps], as the Kaggle metric does


def _matrix(frame: pd.DataFrame, columns: Sequence[str], what: str) -> np.ndarray:
    values = np.column_stack([pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float) for c in columns])
    if not np.all(np.isfinite(values)):
        raise MetricError(f"the {what} hold values that are not finite numbers in {list(columns)}")
    return values


def _flags(answers: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    truth = _matrix(answers, columns, "answers")
    if not np.isin(truth, (0.0, 1.0)).all():
        raise MetricError(f"the answers' label columns {list(columns)} must hold 0 or 1")
    return truth.astype(int)


def column_roc_auc(answers, submission, columns) -> float:
    """Mean over the columns of the ROC AUC of each column's probabilities against its 0/1 answers."""
    from sklearn.metrics import roc_auc_score

    truth, predicted = _flags(answers, columns), _matrix(submission, columns, "submission")
    one_class = [c for i, c in enumerate(columns) if len(np.unique(truth[:, i])) < 2]
    if one_class:
        raise MetricError(f"column_roc_auc needs both 0 and 1 among the answers of every column; "
                          f"{one_class[:5]} hold one value only")
    return float(np.mean([roc_auc_score(truth[:, i], predicted[:, i]) for i in range(len(columns))]))


def lwlrap(answers, submission, columns) -> float:
    """Label-weighted label-ranking average precision: every true label of every row weighs the same."""
    from sklearn.metrics import label_ranking_average_precision_score

    truth, predicted = _flags(answers, columns), _matrix(submission, columns, "submission")
    weights = truth.sum(axis=1)
    keep = weights > 0
    if not keep.any():
        raise MetricError("lwlrap needs at least one row of the answers with a true label")
    return float(label_ranking_average_precision_score(truth[keep], predicted[keep], sample_weight=weights[keep]))


def kl_divergence(answers, submission, columns) -> float:
    """Mean over rows of sum_j y_j * log(y_j / clip(p_j)); a column whose answer is 0 adds nothing."""
    truth, predicted = _matrix(answers, columns, "answers"), _matrix(submission, columns, "submission")
    if (truth < 0).any():
        raise MetricError(f"the answers' columns {list(columns)} must hold probabilities of at least 0")
    clipped = np.clip(predicted, KL_EPSILON, 1 - KL_EPSILON)
    safe = np.where(truth > 0, truth, 1.0)
    terms = np.where(truth > 0, truth * np.log(safe / clipped), 0.0)
    return float(np.mean(terms.sum(axis=1)))


def _label_sets(frame: pd.DataFrame, column: str) -> list[set[str]]:
    return [set(parse_ranking(v)) for v in frame[column]]


def label_set_f1(answers, submission, columns) -> float:
    """Micro-averaged F1 over label sets: 2 TP / (2 TP + FP + FN), counted over every row's labels."""
    tp = fp = fn = 0
    for truth, predicted in zip(_label_sets(answers, columns[0]), _label_sets(submission, columns[0])):
        tp += len(truth & predicted)
        fp += len(predicted - truth)
        fn += len(truth - predicted)
    return 1.0 if tp + fp + fn == 0 else 2.0 * tp / (2 * tp + fp + fn)


def _words(value) -> set[str]:
    return set(str(value).lower().split())


def jaccard(answers, submission, columns) -> float:
    """Mean over rows of |A n B| / |A u B| of the lowercased word sets; two empty texts score 1."""
    scores = []
    for truth, predicted in zip(answers[columns[0]], submission[columns[0]]):
        a, b = _words(truth), _words(predicted)
        scores.append(1.0 if not (a | b) else len(a & b) / len(a | b))
    return float(np.mean(scores))


def edit_distance(first: Sequence, second: Sequence) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions turning one into the other."""
    if len(first) < len(second):
        first, second = second, first
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i]
        for j, b in enumerate(second, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def _texts(frame: pd.DataFrame, column: str) -> list[str]:
    return ["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in frame[column]]


def levenshtein(answers, submission, columns) -> float:
    """Mean over rows of the character edit distance between the answer and the prediction."""
    pairs = zip(_texts(answers, columns[0]), _texts(submission, columns[0]))
    return float(np.mean([edit_distance(truth, predicted) for truth, predicted in pairs]))


def word_error_rate(answers, submission, columns) -> float:
    """Sum over rows of the word-level edit distance, over the number of words in the answers."""
    truths = [t.split() for t in _texts(answers, columns[0])]
    predictions = [p.split() for p in _texts(submission, columns[0])]
    total = sum(len(t) for t in truths)
    if total == 0:
        raise MetricError(f"word_error_rate needs words in the answers' `{columns[0]}`; every row is empty")
    return sum(edit_distance(t, p) for t, p in zip(truths, predictions)) / total


def _inversions(ranks: list[int]) -> int:
    """Pairs i < j with ranks[i] > ranks[j], by merge sort."""
    if len(ranks) < 2:
        return 0
    middle = len(ranks) // 2
    left, right = ranks[:middle], ranks[middle:]
    count = _inversions(left) + _inversions(right)
    left, right = sorted(left), sorted(right)
    j = 0
    for value in left:
        while j < len(right) and right[j] < value:
            j += 1
        count += j
    return count


def kendall_tau(answers, submission, columns) -> float:
    """1 - 4 * (inversions of the predicted orders) / sum of n (n - 1), over all rows together."""
    inversions = pairs = 0
    for row, (truth, predicted) in enumerate(zip(answers[columns[0]], submission[columns[0]]), start=1):
        order, guess = parse_ranking(truth), parse_ranking(predicted)
        if sorted(order) != sorted(guess) or len(set(order)) != len(order):
            raise MetricError(f"row {row}: kendall_tau needs the prediction in `{columns[0]}` to order exactly "
                              f"the answer's items ({len(order)} items, each once)")
        position = {item: i for i, item in enumerate(order)}
        inversions += _inversions([position[item] for item in guess])
        pairs += len(order) * (len(order) - 1)
    if pairs == 0:
        raise MetricError(f"kendall_tau needs rows of at least two items in `{columns[0]}`")
    return 1.0 - 4.0 * inversions / pairs


def _correlation(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Pearson's r; 0 when either side is constant (no linear association can be measured)."""
    if truth.std() == 0 or predicted.std() == 0:
        return 0.0
    return float(np.corrcoef(truth, predicted)[0, 1])


def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values)  # ties share their average rank


def pearson(answers, submission, columns) -> float:
    """Mean over the columns of Pearson's correlation of the predictions with the answers."""
    return float(np.mean([_correlation(*numeric_pairs(answers, submission, c)) for c in columns]))


def spearman(answers, submission, columns) -> float:
    """Mean over the columns of Spearman's rank correlation (Pearson's r of the average ranks)."""
    scores = []
    for column in columns:
        truth, predicted = numeric_pairs(answers, submission, column)
        scores.append(_correlation(_ranks(truth), _ranks(predicted)))
    return float(np.mean(scores))


def mcc(answers, submission, columns) -> float:
    """Matthews correlation coefficient of the predicted labels (scikit-learn's matthews_corrcoef)."""
    from sklearn.metrics import matthews_corrcoef

    truth = [label_key(v) for v in answers[columns[0]]]
    predicted = [label_key(v) for v in submission[columns[0]]]
    return float(matthews_corrcoef(truth, predicted))


def error_rate(answers, submission, columns) -> float:
    """Share of rows whose predicted label differs from the answer (1 - accuracy)."""
    truth = [label_key(v) for v in answers[columns[0]]]
    predicted = [label_key(v) for v in submission[columns[0]]]
    return float(np.mean([t != p for t, p in zip(truth, predicted)]))


def mcrmsle(answers, submission, columns) -> float:
    """Mean over the columns of each column's RMSLE."""
    scores = []
    for column in columns:
        truth, predicted = numeric_pairs(answers, submission, column)
        if (truth < 0).any() or (predicted < 0).any():
            raise MetricError(f"mcrmsle needs values of at least 0; `{column}` holds negative ones")
        scores.append(float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(truth)) ** 2))))
    return float(np.mean(scores))


def wape(answers, submission, columns) -> float:
    """Weighted absolute percentage error: sum |y - f| / sum |y|, a fraction (0.1 = 10%)."""
    truth, predicted = numeric_pairs(answers, submission, columns[0])
    scale = np.abs(truth).sum()
    if scale == 0:
        raise MetricError(f"wape divides by the sum of |answers|, and every answer in `{columns[0]}` is 0")
    return float(np.abs(truth - predicted).sum() / scale)


def mase(answers, submission, columns, scale: str = "scale") -> float:
    """Mean over rows of |y - f| / s, s being the answers' `scale` column: the series' in-sample
    mean absolute error of the naive (previous value) forecast, prepared with the data."""
    column = columns[0]
    truth = pd.to_numeric(answers[column], errors="coerce").to_numpy(dtype=float)
    scales = pd.to_numeric(answers[scale], errors="coerce").to_numpy(dtype=float)
    predicted = pd.to_numeric(submission[column], errors="coerce").to_numpy(dtype=float)
    keep = np.isfinite(truth)
    if not (np.isfinite(scales[keep]).all() and (scales[keep] > 0).all()):
        raise MetricError(f"mase needs a positive number in the answers' `{scale}` column of every scored row")
    if not np.isfinite(predicted).all():
        raise MetricError(f"column `{column}` of the submission holds values that are not finite numbers")
    return float(np.mean(np.abs(truth[keep] - predicted[keep]) / scales[keep]))
