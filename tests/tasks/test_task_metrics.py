"""Each tabular task's metric on its own lite answers: a perfect submission, a known-bad one, malformed ones."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from task_helpers import TABULAR

from mlab.scoring.score import score_workspace

PERFECT = {"accuracy": 1.0, "mae": 0.0, "smape1": 0.0, "mcrmse": 0.0, "dice": 1.0, "fathomnet": 1.0}


def answers_of(task, prepared) -> pd.DataFrame:
    variant = task.variant("lite")
    return pd.read_csv(prepared.private / variant.private[0], dtype=str, keep_default_na=False)


def submit(tmp_path, task, table: pd.DataFrame) -> object:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    table.to_csv(workspace / task.view.submission.file, index=False)
    return workspace


def known_bad(table: pd.DataFrame, task) -> pd.DataFrame:
    """Predictions far from the answers, in the right format."""
    metric = task.view.metric.name
    bad = table.copy()
    if metric == "fathomnet":
        bad["osd"] = 1 - pd.to_numeric(bad["osd"])               # out-of-sample flags reversed
        bad["categories"] = np.roll(bad["categories"].to_numpy(), 1)  # each row its neighbour's categories
                                                                       # (an unknown id would be refused)
        return bad
    for column in task.view.metric.columns:
        if metric == "accuracy":
            bad[column] = np.roll(bad[column].to_numpy(), 1)   # each row gets its neighbour's label
        elif metric == "dice":
            bad[column] = "1 1024"                              # the whole 32x32 scene
        else:
            truth = pd.to_numeric(bad[column], errors="coerce").fillna(0.0)
            bad[column] = 4 * truth + 10 * (truth.std() + 1)
    return bad


def better(a: float, b: float, direction: str) -> bool:
    return a < b if direction == "lower_is_better" else a > b


@pytest.mark.parametrize("name", TABULAR)
def test_perfect_submission_gets_the_best_score(name, task_of, prepared, tmp_path):
    task = task_of(name)
    done = prepared(name)
    table = answers_of(task, done)[list(task.view.submission.columns)]
    score = score_workspace(task, "lite", submit(tmp_path, task, table), done.private)
    assert score.failure_mode is None, score.detail
    assert score.value == pytest.approx(PERFECT[task.view.metric.name])


@pytest.mark.parametrize("name", TABULAR)
def test_known_bad_submission_scores_below_the_recorded_baseline(name, task_of, prepared, tmp_path):
    from mlab.scoring.baseline import recorded_entry

    task = task_of(name)
    done = prepared(name)
    table = answers_of(task, done)[list(task.view.submission.columns)]
    score = score_workspace(task, "lite", submit(tmp_path, task, known_bad(table, task)), done.private)
    assert score.failure_mode is None, score.detail
    baseline = recorded_entry(task, "lite")["value"]
    assert better(baseline, score.value, task.view.metric.direction)


@pytest.mark.parametrize("name", TABULAR)
def test_submission_without_a_scored_column_is_a_format_error(name, task_of, prepared, tmp_path):
    task = task_of(name)
    done = prepared(name)
    columns = list(task.view.submission.columns)
    table = answers_of(task, done)[columns[:-1]]
    score = score_workspace(task, "lite", submit(tmp_path, task, table), done.private)
    assert (score.value, score.failure_mode) == (None, "submission format error")
    assert f"lacks column(s) ['{columns[-1]}']" in score.detail


@pytest.mark.parametrize("name", TABULAR)
def test_submission_missing_rows_is_a_format_error(name, task_of, prepared, tmp_path):
    task = task_of(name)
    done = prepared(name)
    table = answers_of(task, done)[list(task.view.submission.columns)].iloc[1:]
    score = score_workspace(task, "lite", submit(tmp_path, task, table), done.private)
    assert score.failure_mode == "submission format error"
    assert "1 of the" in score.detail and "test ids are missing" in score.detail


def test_no_submission_file_is_said_so(task_of, prepared, tmp_path):
    task = task_of("house-price")
    (tmp_path / "empty").mkdir()
    score = score_workspace(task, "lite", tmp_path / "empty", prepared("house-price").private)
    assert (score.submitted, score.failure_mode) == (False, "submission format error")
    assert "submission.csv" in score.detail


def test_a_label_outside_the_declared_set_is_a_format_error(task_of, prepared, tmp_path):
    task = task_of("imdb")  # `column "label" label from ["0", "1"]`
    done = prepared("imdb")
    table = answers_of(task, done)[list(task.view.submission.columns)]
    table.loc[1, "label"] = "positive"
    score = score_workspace(task, "lite", submit(tmp_path, task, table), done.private)
    assert (score.value, score.failure_mode) == (None, "submission format error")
    assert (f"row 2 (id {table.loc[1, 'id']}), column label: 'positive' is not in the vocabulary"
            in score.detail), score.detail
