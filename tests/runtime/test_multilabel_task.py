"""A multi-label task scored by mean column-wise ROC AUC, written without any Python: the catalogue's
`column_roc_auc` scores it, and the submission checks (probabilities in [0, 1], every label column)
still refuse a malformed file before any score."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from mlab.build import resolve_task
from mlab.data.prepare import prepare_data
from mlab.errors import MlabError
from mlab.scoring.score import score_workspace

LABELS = ["toxic", "insult"]


def make_task(folder: Path, metric: str = 'column_roc_auc on ["toxic", "insult"]',
              answers: str = '["toxic", "insult"]') -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "env").mkdir(exist_ok=True)
    (folder / "env" / "train.py").write_text("print('hello')\n")
    rows = ["id,text,toxic,insult,scored"]
    for i in range(40):
        rows.append(f"{i},comment {i},{i % 2},{(i // 2) % 2},{int(i % 5 != 0)}")
    (folder / "comments.csv").write_text("\n".join(rows) + "\n")
    source = folder / "labels.mlab"
    source.write_text(textwrap.dedent(f"""\
        use std "agents"
        task labels {{
          title "Label the comments"
          category canonical
          problem "Predict the probability of each label; write submission.csv with the columns id, toxic and insult."
          starter "env"
          data lite {{ from csv "comments.csv" split random 0.5 seed 3 id "id" answers {answers}
                      public ["train.csv", "test.csv"] private ["answers.csv"] }}
          submission "submission.csv" columns ["id", "toxic", "insult"]
          metric {metric}
          baseline 0.5 because "chance"
        }}
        """))
    return source


def submit(workspace: Path, table: pd.DataFrame) -> Path:
    workspace.mkdir(exist_ok=True)
    table.to_csv(workspace / "submission.csv", index=False)
    return workspace


@pytest.fixture
def task_and_answers(tmp_path, mlab_env):
    task = resolve_task(str(make_task(tmp_path / "t")))
    prepared = prepare_data(task, "lite")
    return task, prepared, pd.read_csv(prepared.private / "answers.csv")


def test_a_multilabel_task_is_scored_by_the_catalogue_without_an_evaluator(task_and_answers, tmp_path):
    task, prepared, answers = task_and_answers
    assert task.view.evaluator is None and task.view.metric.kind == "tabular"
    perfect = answers[["id", *LABELS]]
    assert score_workspace(task, "lite", submit(tmp_path / "w1", perfect), prepared.private).value == 1.0
    reversed_ = perfect.assign(toxic=1 - perfect["toxic"])  # toxic ranked backwards (AUC 0), insult perfect
    assert score_workspace(task, "lite", submit(tmp_path / "w2", reversed_), prepared.private).value == 0.5


def test_the_multilabel_submission_is_still_checked(task_and_answers, tmp_path):
    task, prepared, answers = task_and_answers
    bad = answers[["id", *LABELS]].astype(float).assign(insult=1.5)
    result = score_workspace(task, "lite", submit(tmp_path / "w1", bad), prepared.private)
    assert (result.value, result.failure_mode) == (None, "submission format error")
    assert "out of range" in result.detail and "a probability from 0 to 1" in result.detail
    missing = answers[["id", "toxic"]]
    result = score_workspace(task, "lite", submit(tmp_path / "w2", missing), prepared.private)
    assert (result.value, result.failure_mode) == (None, "submission format error")
    assert "insult" in result.detail


def test_rows_scores_only_the_rows_the_answers_flag(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", metric='column_roc_auc(rows = "scored") on ["toxic", "insult"]',
                       answers='["toxic", "insult", "scored"]')
    task = resolve_task(str(source))
    prepared = prepare_data(task, "lite")
    answers = pd.read_csv(prepared.private / "answers.csv")
    # right on the flagged rows, backwards on the others: a perfect score when only flagged rows count
    table = answers[["id", *LABELS]].astype(float)
    unscored = answers["scored"] == 0
    table.loc[unscored, LABELS] = 1 - table.loc[unscored, LABELS]
    assert unscored.any()
    assert score_workspace(task, "lite", submit(tmp_path / "w", table), prepared.private).value == 1.0


def test_a_rows_flag_that_is_not_an_answer_column_is_refused_at_check_time(tmp_path, mlab_env):
    source = make_task(tmp_path / "t", metric='column_roc_auc(rows = "scored") on ["toxic", "insult"]')
    with pytest.raises(MlabError, match=r"E408\].*`scored` is not among the answers of data `lite`"):
        resolve_task(str(source))


def test_label_columns_whose_answers_are_not_flags_are_refused_at_check_time(tmp_path, mlab_env):
    folder = tmp_path / "t"
    make_task(folder)
    rows = (folder / "comments.csv").read_text().splitlines()
    rows = [rows[0]] + [row.replace(",1,", ",2,", 1) if i % 3 == 0 else row for i, row in enumerate(rows[1:])]
    (folder / "comments.csv").write_text("\n".join(rows) + "\n")
    from mlabc.api import check_paths

    found = [d for d in check_paths([str(folder / "labels.mlab")], data=True).diagnostics if d.code == "E562"]
    assert found and "`column_roc_auc` cannot score `toxic`: the answers' `toxic` holds '2'" in found[0].message
    assert found[0].span.line == 10  # at the metric's column


def test_empty_label_sets_are_answers_a_label_set_metric_scores(tmp_path, mlab_env):
    folder = tmp_path / "t"
    (folder / "env").mkdir(parents=True)
    (folder / "env" / "train.py").write_text("print('hello')\n")
    rows = ["id,text,tags"] + [f"{i},post {i},{'' if i % 4 == 0 else 'a b' if i % 2 else 'c'}" for i in range(20)]
    (folder / "posts.csv").write_text("\n".join(rows) + "\n")
    (folder / "tags.mlab").write_text(textwrap.dedent("""\
        use std "agents"
        task tags {
          title "Tag the posts"
          category canonical
          problem "Predict each post's tags; write submission.csv with the columns id and tags."
          starter "env"
          data lite { from csv "posts.csv" split random 0.5 seed 3 id "id" answers ["tags"]
                      public ["train.csv", "test.csv"] private ["answers.csv"] }
          submission "submission.csv" columns ["id", "tags"]
          metric label_set_f1 on "tags"
          baseline 0.5 because "chance"
        }
        """))
    from mlabc.api import check_paths

    checked = check_paths([str(folder / "tags.mlab")], data=True)  # blank answers (no tag) are not E561 here
    assert checked.ok, [str(d) for d in checked.diagnostics]
    task = resolve_task(str(folder / "tags.mlab"))
    prepared = prepare_data(task, "lite")
    answers = pd.read_csv(prepared.private / "answers.csv", keep_default_na=False, dtype=str)
    assert "" in set(answers["tags"])
    assert score_workspace(task, "lite", submit(tmp_path / "w", answers[["id", "tags"]]), prepared.private).value == 1.0
