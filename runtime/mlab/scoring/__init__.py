"""Scoring a submission (tabular metrics, timed metrics, a task's evaluator) against the baseline, into result.json."""
from mlabc.lazy import lazy_exports as exports

# name → the module under this package that defines it; imported on first use
_NAMES = {
    "AnswersError": "submission",
    "MetricError": "metrics",
    "RESULT": "result",
    "SIGN_TEST_LEVEL": "metrics",
    "Score": "outcome",
    "SubmissionError": "submission",
    "code_hash": "baseline",
    "compare_outputs": "metrics",
    "fresh_copy": "timed_sandbox",
    "improvement": "metrics",
    "is_success": "metrics",
    "label_key": "metrics",
    "load_and_validate": "submission",
    "load_answers": "submission",
    "measure_baseline": "baseline",
    "measure_starter": "baseline",
    "needs_more_rounds": "metrics",
    "record_baseline": "baseline",
    "recorded_baseline": "baseline",
    "recorded_entry": "baseline",
    "round_order": "timed",
    "rounds_required": "metrics",
    "run_starter": "baseline",
    "score_run_timed": "timed",
    "score_timed": "timed",
    "score_with_evaluator": "evaluator",
    "score_run": "score",
    "score_workspace": "score",
    "timed_rounds_succeed": "metrics",
    "timed_score": "metrics",
    "within_tolerance": "baseline",
    "write_result": "result",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = exports(__name__, _NAMES)
