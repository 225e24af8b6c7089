"""The split kinds MLE-bench's preparation uses, as the language's: random, group, stratified (per class)
and time. Here the one added for it, `split stratified`, on small tables written in the test."""
from __future__ import annotations

import pandas as pd
import pytest

from mlab.documents.view import thaw
from mlab.data.splits import split_table
from mlab.errors import DataError


def table(counts: dict[str, int]) -> pd.DataFrame:
    labels = [label for label, count in counts.items() for _ in range(count)]
    return pd.DataFrame({"Id": range(len(labels)), "label": labels})


def test_stratified_split_draws_each_classs_share():
    frame = table({"a": 50, "b": 20, "c": 10})
    train, test = split_table(frame, {"method": "stratified", "column": "label", "fraction": 0.2, "seed": 3}, "t")
    assert test["label"].value_counts().to_dict() == {"a": 10, "b": 4, "c": 2}
    assert train["label"].value_counts().to_dict() == {"a": 40, "b": 16, "c": 8}
    assert not set(train["Id"]) & set(test["Id"])


def test_stratified_split_is_deterministic_by_its_seed():
    frame = table({"a": 30, "b": 30})
    split = {"method": "stratified", "column": "label", "fraction": 0.5}
    first = split_table(frame, {**split, "seed": 1}, "t")[1]["Id"].tolist()
    assert split_table(frame, {**split, "seed": 1}, "t")[1]["Id"].tolist() == first
    assert split_table(frame, {**split, "seed": 2}, "t")[1]["Id"].tolist() != first


def test_a_class_of_one_row_stays_in_training():
    frame = table({"a": 10, "rare": 1})
    train, test = split_table(frame, {"method": "stratified", "column": "label", "fraction": 0.5, "seed": 0}, "t")
    assert "rare" in set(train["label"]) and "rare" not in set(test["label"])
    assert len(test) == 5


def test_a_row_without_a_class_is_refused():
    frame = table({"a": 4}).assign(label=["a", None, "a", "a"])
    with pytest.raises(DataError, match=r"`split stratified 'label'` needs a class in every row; 1 row\(s\) have none"):
        split_table(frame, {"method": "stratified", "column": "label", "fraction": 0.5, "seed": 0}, "t")


def test_a_stratified_task_compiles_and_prepares(tmp_path, mlab_env):
    import textwrap

    from mlab.build import resolve_task
    from mlab.data.prepare import prepare_data

    folder = tmp_path / "t"
    (folder / "env").mkdir(parents=True)
    (folder / "env" / "train.py").write_text("print('hello')\n")
    rows = "".join(f"{i},{i % 7},{'ab'[i % 4 == 0]}\n" for i in range(40))
    (folder / "rows.csv").write_text("Id,x,label\n" + rows)
    (folder / "mini.mlab").write_text(textwrap.dedent("""\
        use std "agents"
        task mini {
          title "A small task"
          category canonical
          problem "Predict label; write submission.csv with the columns Id and label."
          starter "env"
          data lite { from csv "rows.csv" split stratified "label" 0.25 seed 5 id "Id" answers ["label"]
                      public ["train.csv", "test.csv"] private ["answers.csv"] }
          submission "submission.csv" columns ["Id", "label"]
          metric accuracy on "label"
          baseline 0.5 because "chance"
        }
        """))
    task = resolve_task(str(folder / "mini.mlab"))
    assert thaw(task.variant("lite").split) == {"method": "stratified", "column": "label", "fraction": 0.25, "seed": 5}
    prepared = prepare_data(task, "lite")
    answers = pd.read_csv(prepared.private / "answers.csv")
    assert answers["label"].value_counts().to_dict() == {"a": 8, "b": 2}  # 30 a and 10 b, a quarter of each
