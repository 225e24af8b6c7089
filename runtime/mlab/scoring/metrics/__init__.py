"""The metric catalogue: each name of spec/metrics.json mapped to its implementation.

Tabular metrics take the answers and a submission already aligned row by row on the
id (see `mlab.scoring.submission.load_and_validate`) plus the scored columns, and return a
float. Evaluator metrics (perplexity, custom) are computed by the task's declared
evaluator; here they only say so. The timed metric (runtime) is measured in the
sandbox by others; `outputs` and `timing` give its two pure parts: `compare_outputs` (does the
candidate's output match the reference?) and `timed_score` (medians and speed-up).

`improvement` and `is_success` turn a score and a baseline into the result's verdict.
Nothing here draws random numbers: the same inputs always give the same score.
"""
from __future__ import annotations

from mlab.scoring.metrics.values import (ARRAY_ATOL, ARRAY_RTOL, DIRECTIONS, HIGHER_IS_BETTER, LOWER_IS_BETTER, MAP_K,
                                         MetricError, is_missing, label_key, parse_ranking, parse_rle)
from mlab.scoring.metrics.tabular import (METRICS, Metric, ValueKinds, accuracy, average_precision_at_k,
                                          dice, fathomnet, fathomnet_roles, get_metric,
                                          improvement, is_success, mae, mcrmse, rmse, score, smape1)
from mlab.scoring.metrics.outputs import compare_outputs
from mlab.scoring.metrics.timing import (SIGN_TEST_LEVEL, needs_more_rounds, rounds_clearing, rounds_required,
                                         timed_rounds_succeed, timed_score)

__all__ = ["ARRAY_ATOL", "ARRAY_RTOL", "DIRECTIONS", "HIGHER_IS_BETTER", "LOWER_IS_BETTER", "MAP_K", "MetricError",
           "is_missing", "label_key", "parse_ranking", "parse_rle", "METRICS", "Metric", "ValueKinds", "accuracy",
           "average_precision_at_k", "dice", "fathomnet", "fathomnet_roles", "get_metric",
           "improvement", "is_success", "mae", "mcrmse", "rmse", "score", "smape1", "compare_outputs",
           "SIGN_TEST_LEVEL", "needs_more_rounds", "rounds_clearing", "rounds_required", "timed_rounds_succeed",
           "timed_score"]
