"""Scoring a submission (tabular metrics, timed metrics, a task's evaluator) against the baseline, into result.json."""
