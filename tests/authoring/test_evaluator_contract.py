"""A custom metric's display name reaches result.json, and `mlabc explain evaluator` prints the contract."""
from __future__ import annotations

from mlab.documents.task import Metric
from mlab.scoring.evaluate import metric_display


def test_mlabc_explain_evaluator_prints_the_contract(mlabc):
    code, out, _ = mlabc("explain", "evaluator")
    assert code == 0
    for part in ("def score(submission_dir: str, private_dir: str) -> float", "SubmissionInvalid",
                 "task error", "requires", 'custom(name = "Dice over masks")'):
        assert part in out


def test_the_display_name_goes_into_result_json():
    named = Metric("custom", (), "higher_is_better", "evaluator", {"name": "Dice over masks"})
    assert metric_display(named) == {"metric_display": "Dice over masks"}
    assert metric_display(Metric("mae", ("y",), "lower_is_better", "tabular")) == {}
