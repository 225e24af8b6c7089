"""The metrics a researcher expects, computed with scikit-learn: classification (f1, precision, recall, qwk),
regression (r2, rmsle, mape), probability tables (roc_auc, log_loss, top_k_accuracy, proba_accuracy) and
map_at_k.

A probability table is one submission column per class; the true class is in the answers' column that the
parameter `answer` names. A column's class is its name when every answer is a column name, else its
position (0, 1, ...), as cifar10's original scoring reads the argmax. With one column, roc_auc and
log_loss read it as the probability of the positive class (1) and the answers' column of the same name as
0/1 flags. scikit-learn is imported on first use, as for fathomnet.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from mlab.scoring.metrics.values import MAP_K, MetricError, label_key, numeric_pairs, parse_ranking

AVERAGES = ("binary", "micro", "macro", "weighted")


def _labels(frame: pd.DataFrame, column: str) -> list[str]:
    return [label_key(v) for v in frame[column]]


def _classification(function: str, answers, submission, columns, average: str = "binary",
                    pos_label: str = "1") -> float:
    import sklearn.metrics

    if average not in AVERAGES:
        raise MetricError(f"average must be one of {', '.join(AVERAGES)}, got {average!r}")
    truth, predicted = _labels(answers, columns[0]), _labels(submission, columns[0])
    options = {"average": average, "zero_division": 0}
    if average == "binary":
        classes = set(truth) | set(predicted)
        if len(classes) > 2:
            raise MetricError(f"average `binary` needs two classes, `{columns[0]}` holds {len(classes)}; "
                              f"declare `average = \"macro\"` (or micro, weighted)")
        options["pos_label"] = label_key(pos_label)
        if options["pos_label"] not in classes:
            return 0.0
    return float(getattr(sklearn.metrics, function)(truth, predicted, **options))


def f1(answers, submission, columns, **params) -> float:
    """F1 score over the labels of one column, averaged as declared."""
    return _classification("f1_score", answers, submission, columns, **params)


def precision(answers, submission, columns, **params) -> float:
    """Precision over the labels of one column, averaged as declared."""
    return _classification("precision_score", answers, submission, columns, **params)


def recall(answers, submission, columns, **params) -> float:
    """Recall over the labels of one column, averaged as declared."""
    return _classification("recall_score", answers, submission, columns, **params)


def qwk(answers, submission, columns) -> float:
    """Quadratic weighted kappa of whole-number ratings."""
    from sklearn.metrics import cohen_kappa_score

    truth, predicted = numeric_pairs(answers, submission, columns[0])
    if not (np.all(truth == np.round(truth)) and np.all(predicted == np.round(predicted))):
        raise MetricError(f"qwk scores whole-number ratings; `{columns[0]}` holds fractions")
    if len(np.unique(np.concatenate([truth, predicted]))) < 2:
        return 1.0  # one rating everywhere: agreement is perfect, and sklearn would divide by zero
    return float(cohen_kappa_score(truth.astype(int), predicted.astype(int), weights="quadratic"))


def r2(answers, submission, columns) -> float:
    """Coefficient of determination."""
    from sklearn.metrics import r2_score

    return float(r2_score(*numeric_pairs(answers, submission, columns[0])))


def rmsle(answers, submission, columns) -> float:
    """Root mean squared logarithmic error; values must not be negative."""
    from sklearn.metrics import root_mean_squared_log_error

    truth, predicted = numeric_pairs(answers, submission, columns[0])
    if (predicted < 0).any():
        raise MetricError(f"rmsle needs predictions of at least 0; `{columns[0]}` holds negative values")
    if (truth < 0).any():
        raise MetricError(f"rmsle needs answers of at least 0; the answers' `{columns[0]}` holds negative values")
    return float(root_mean_squared_log_error(truth, predicted))


def mape(answers, submission, columns) -> float:
    """Mean absolute percentage error, as a fraction (0.1 = 10%), as scikit-learn computes it."""
    from sklearn.metrics import mean_absolute_percentage_error

    return float(mean_absolute_percentage_error(*numeric_pairs(answers, submission, columns[0])))


def _table(answers, submission, columns, answer: str) -> tuple[np.ndarray, np.ndarray]:
    """(true class index per row, probability matrix) of a probability table."""
    probabilities = np.column_stack([pd.to_numeric(submission[c], errors="coerce").to_numpy(dtype=float)
                                     for c in columns])
    if not np.all(np.isfinite(probabilities)):
        raise MetricError("the probability table holds values that are not finite numbers")
    truth = _labels(answers, answer)
    names = [label_key(c) for c in columns]
    classes = names if set(truth) <= set(names) else [str(i) for i in range(len(columns))]
    unknown = sorted(set(truth) - set(classes))
    if unknown:
        raise MetricError(f"the answers' `{answer}` holds classes {unknown[:5]} that no column of the "
                          f"probability table {list(columns)} stands for")
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[t] for t in truth]), probabilities


def _binary_flags(answers, column: str) -> np.ndarray:
    flags = pd.to_numeric(answers[column], errors="coerce").to_numpy(dtype=float)
    if not np.isin(flags, (0.0, 1.0)).all():
        raise MetricError(f"with one column, the answers' `{column}` must hold 0 or 1")
    return flags.astype(int)


def roc_auc(answers, submission, columns, answer: str = "label") -> float:
    """ROC AUC: of one probability column against 0/1 answers, or one-vs-rest (macro) over a table."""
    from sklearn.metrics import roc_auc_score

    if len(columns) == 1:
        flags = _binary_flags(answers, columns[0])
        if len(np.unique(flags)) < 2:
            raise MetricError(f"roc_auc needs both classes among the answers' `{columns[0]}`")
        return float(roc_auc_score(flags, pd.to_numeric(submission[columns[0]]).to_numpy(dtype=float)))
    truth, probabilities = _table(answers, submission, columns, answer)
    if len(np.unique(truth)) != len(columns):
        raise MetricError("one-vs-rest roc_auc needs every class of the table among the answers")
    rows = probabilities.sum(axis=1, keepdims=True)
    normalised = probabilities / np.where(rows == 0, 1.0, rows)
    return float(roc_auc_score(truth, normalised, multi_class="ovr", labels=list(range(len(columns)))))


def log_loss(answers, submission, columns, answer: str = "label") -> float:
    """Cross-entropy of the predicted probabilities (rows of a table are normalised to sum to 1)."""
    from sklearn.metrics import log_loss as sklearn_log_loss

    if len(columns) == 1:
        flags = _binary_flags(answers, columns[0])
        predicted = pd.to_numeric(submission[columns[0]]).to_numpy(dtype=float)
        return float(sklearn_log_loss(flags, predicted, labels=[0, 1]))
    truth, probabilities = _table(answers, submission, columns, answer)
    rows = probabilities.sum(axis=1, keepdims=True)
    if (rows == 0).any():
        raise MetricError("a row of the probability table sums to 0")
    return float(sklearn_log_loss(truth, probabilities / rows, labels=list(range(len(columns)))))


def top_k_accuracy(answers, submission, columns, answer: str = "label", k: int = 5) -> float:
    """Share of rows whose true class is among the k most probable columns."""
    from sklearn.metrics import top_k_accuracy_score

    truth, probabilities = _table(answers, submission, columns, answer)
    if not 1 <= int(k) <= len(columns):
        raise MetricError(f"k must lie between 1 and the {len(columns)} columns of the table, got {k}")
    return float(top_k_accuracy_score(truth, probabilities, k=int(k), labels=list(range(len(columns)))))


def proba_accuracy(answers, submission, columns, answer: str = "label") -> float:
    """Accuracy of the most probable column of each row (the first one on a tie, as numpy's argmax)."""
    from sklearn.metrics import accuracy_score

    truth, probabilities = _table(answers, submission, columns, answer)
    return float(accuracy_score(truth, probabilities.argmax(axis=1)))


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



def map_at_k(answers, submission, columns, k: int = 5) -> float:
    """Mean over rows of Kaggle's AP@k of a space-separated ranking against the true items."""
    if int(k) < 1:
        raise MetricError(f"k must be at least 1, got {k}")
    column = columns[0]
    return float(np.mean([average_precision_at_k(set(parse_ranking(t)), parse_ranking(p), int(k))
                          for t, p in zip(answers[column], submission[column])]))


TABLE_METRICS = ("roc_auc", "log_loss", "top_k_accuracy", "proba_accuracy")


def answer_columns(name: str, columns: Sequence[str], params: dict) -> list[str]:
    """The answers' columns a metric reads: its own columns, or for a probability table the `answer` one."""
    if name in TABLE_METRICS and (len(columns) > 1 or name in ("top_k_accuracy", "proba_accuracy")):
        return [params.get("answer", "label")]
    return list(columns)
